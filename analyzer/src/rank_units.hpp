// SPDX-License-Identifier: MIT
// Internal: the ranks of an analysis and the window each is analysed in.
//
//  - Ranks: processes with a rank (grouped: an exec'ed process keeps its rank), else every
//    main process (a process without rank none of the others started; its exec'ed images
//    together), numbered in process order. Workers and other non-rank processes are units of
//    their own (RankUnits::others); launchers are not analysed (process_roles.hpp). Each rank's reference timeline is its main
//    thread (or its busiest CPU thread), or its GPU streams when it has any.
//  - Window: the whole run, a time range, or the ranges of a name (--window); a rank whose
//    thread stopped recording (full disk, quota, buffer limit) ends its window there.
#pragma once

#include <map>

#include "process_roles.hpp"
#include "rank_pass.hpp"

namespace hpcprof::analyzer::detail {

struct RankUnits {
    std::map<int64_t, RankUnit> units; ///< by rank
    /// Workers and other non-rank processes (not launchers), each analysed on its own: by
    /// index in TraceIndex::processes(). Their rank is the unit they belong to, else -1.
    std::map<size_t, RankUnit> others;
    ProcessRoles roles;
    std::vector<std::optional<int64_t>> unitOf; ///< by process index: the unit it is or belongs to
    int64_t jobBegin = INT64_MAX, jobEnd = INT64_MIN; ///< hull of the ranks' activity
};

/// The ranks of the trace with their tracks and active spans; an error when there is none.
Result<RankUnits> rankUnits(const Trace& trace, const TraceIndex& index);

/// Sets each rank's window from `spec` (the default from `steps`, the steps from ranges, and
/// the ranks' activity); returns the job window (the hull of the ranks'), or an error when the
/// spec selects nothing. `choice` says which window and why.
Result<IntervalSet> chooseWindows(const Trace& trace, const TraceIndex& index, const WindowSpec& spec,
                                  const StepStats& steps, RankUnits& ranks, WindowChoice& choice);

/// Ends each rank's window at the earliest stop of a thread its breakdown stands on; returns the
/// number of ranks cut.
int64_t endWindowsWhereRecordingStopped(std::map<int64_t, RankUnit>& units);

} // namespace hpcprof::analyzer::detail
