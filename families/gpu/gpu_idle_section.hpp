// SPDX-License-Identifier: MIT
// The gpu family's idle-cause result (Analysis::sections["gpu_idle"]): per GPU rank, its GPU's
// idle time split by what it waited for, and the longest idle gaps as evidence. Definitions:
// docs/analysis.md, "Why the GPU idles".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

/// What a GPU waited for while it was idle, in the order an idle instant is given to them (the
/// first that applies).
enum class GpuIdleCause {
    KernelWait,    ///< work already launched had not started: waiting on another kernel, stream or event
    Input,         ///< the host was blocked on input: file I/O, a data-loader queue, a pipe
    Communication, ///< the host was in a communication call: a collective's or a message's peer
    Sync,          ///< the host was in a device, stream or event synchronization
    Memcpy,        ///< the host was in a blocking memory copy call
    Launch,        ///< the host was inside a CUDA API call (launch and driver overhead)
    Host,          ///< the host was computing (framework, Python): host-bound
};
inline constexpr int kGpuIdleCauseCount = 7;

/// The name of a cause in reports ("kernel_wait", "input", ...).
const char* gpuIdleCauseName(GpuIdleCause c);

/// The causes with time in `byCause`, largest first (ties in GpuIdleCause order).
std::vector<GpuIdleCause> causesByTime(const std::array<int64_t, kGpuIdleCauseCount>& byCause);

struct GpuIdleGap {
    int64_t begin = 0, end = 0;
    GpuIdleCause cause = GpuIdleCause::Host; ///< the cause of most of it
};

/// One classified piece of idle time (the per-step totals are summed from these).
struct GpuIdlePiece {
    int64_t begin = 0, end = 0;
    GpuIdleCause cause = GpuIdleCause::Host;
};

struct GpuIdleRank {
    int64_t rank = 0;
    int64_t idleNs = 0; ///< = RankBreakdown::gpuIdleNs, the sum of byCause
    std::array<int64_t, kGpuIdleCauseCount> byCause{};
    std::vector<GpuIdleGap> longestGaps; ///< the longest idle gaps, longest first (at most 5)
    std::vector<GpuIdlePiece> pieces;    ///< every classified piece, by time (not in reports)
};

/// Idle time by cause in one step (summed over the GPU ranks that have the step).
struct GpuIdleStep {
    int64_t index = 0;
    int64_t spanNs = 0; ///< the step's extent across ranks (first begin to last end) x GPU ranks
    int64_t idleNs = 0;
    std::array<int64_t, kGpuIdleCauseCount> byCause{};
};

struct GpuIdleSection final : FamilySection {
    static constexpr const char* kName = "gpu_idle";
    std::vector<GpuIdleRank> ranks; ///< GPU ranks, by rank
    std::vector<GpuIdleStep> steps; ///< by step, when the analysis found steps
};

/// The section of `a`, nullptr when the trace has no GPU rank.
inline const GpuIdleSection* gpuIdleSection(const Analysis& a) {
    auto it = a.sections.find(GpuIdleSection::kName);
    return it == a.sections.end() ? nullptr : static_cast<const GpuIdleSection*>(it->second.get());
}

} // namespace hpcprof::analyzer
