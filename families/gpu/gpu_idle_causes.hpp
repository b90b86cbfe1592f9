// SPDX-License-Identifier: MIT
// Why a GPU rank's GPU idles (part of the gpu family's rank scan): the host's state by cause,
// collected from the rank's CPU tracks, and the launched-but-not-started spans of its GPU work
// (the launch API call's end to the activity's start, joined by correlation id). At the end of
// the rank, every idle instant of the GPU goes to the first cause that holds at that instant
// (GpuIdleCause order); the host computing is what is left. Ranks without a GPU cost nothing:
// nothing is collected for a process that has no GPU track.
#pragma once

#include <unordered_map>
#include <vector>

#include "family_analysis.hpp"
#include "gpu_idle_section.hpp"
#include "intervals.hpp"

namespace hpcprof::analyzer {

class GpuIdleCauses {
public:
    explicit GpuIdleCauses(const TraceIndex& index) : m_index(index) {}

    /// Called for each track of the rank before its events.
    void beginTrack(const TrackInfo& t);
    /// An event of the rank inside the window (any category the gpu family takes).
    void onEvent(const EventRecord& e, bool gpuTrack);
    /// Classifies the rank's GPU idle time (nothing for a rank without a GPU).
    void finish(const RankEnd& end);

    GpuIdleRank result;

private:
    enum NameKind : int8_t { kUnknown = -1, kPlain = 0, kInputRange = 1, kSyncApi = 2, kCopyApi = 4 };
    int8_t nameKind(int64_t nameId);
    GpuIdleCause hostCause(const EventRecord& e);
    void classify(const IntervalSet& idle);
    void addPieces(const IntervalSet& part, GpuIdleCause cause);

    const TraceIndex& m_index;
    bool m_processHasGpu = false;
    int64_t m_checkedProcess = -1; ///< the process whose tracks were last looked at
    std::vector<IntervalSet> m_host = std::vector<IntervalSet>(kGpuIdleCauseCount);
    std::unordered_map<int64_t, int64_t> m_launchEnd; ///< correlation id -> its API call's end
    std::vector<std::pair<int64_t, int64_t>> m_deviceStart; ///< (correlation id, activity start)
    std::vector<int8_t> m_nameKinds;                  ///< by name id, NameKind bits
};

/// The ranks' classified idle time summed per step (each step's [begin, end) across ranks).
std::vector<GpuIdleStep> idleBySteps(const std::vector<GpuIdleRank>& ranks, const StepStats& steps);

} // namespace hpcprof::analyzer
