// SPDX-License-Identifier: MIT
// The openmp family's result (Analysis::sections["openmp"]): per rank, its parallel regions and
// how evenly their threads worked. Definitions: docs/analysis.md, "OpenMP".
#pragma once

#include <cstdint>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

struct OpenMpThread {
    int64_t tid = 0;
    int64_t thread = -1;  ///< its number in the team (of its first implicit task)
    int64_t busyNs = 0;   ///< implicit-task time minus the waits inside it
    int64_t waitNs = 0;   ///< time waiting in barriers, taskwait, taskgroup, reductions
};

struct OpenMpRank {
    int64_t rank = 0;
    int64_t regions = 0;           ///< parallel regions the rank's threads started
    int64_t regionNs = 0;          ///< their time on the threads that started them
    int64_t threads = 0;           ///< threads that ran implicit tasks
    int64_t loops = 0;             ///< work-sharing loops the main thread took part in
    int64_t waitNs = 0;            ///< sum over threads
    int64_t imbalanceNs = 0;       ///< sum over regions of (max - mean) busy time of its threads
    int64_t worstRegionNs = 0;     ///< the region with the largest imbalance: its duration,
    int64_t worstImbalanceNs = 0;  ///< its imbalance,
    int64_t worstEventId = 0;      ///< and its omp_parallel event
    std::vector<OpenMpThread> perThread; ///< by tid
};

struct OpenMpSection final : FamilySection {
    static constexpr const char* kName = "openmp";
    std::vector<OpenMpRank> ranks; ///< ranks with at least one parallel region, by rank
};

/// The section of `a`, nullptr when the trace has no OpenMP regions.
inline const OpenMpSection* openMpSection(const Analysis& a) {
    auto it = a.sections.find(OpenMpSection::kName);
    return it == a.sections.end() ? nullptr : static_cast<const OpenMpSection*>(it->second.get());
}

} // namespace hpcprof::analyzer
