// SPDX-License-Identifier: MIT
// Internal: the steps from ranges, found before the per-rank pass (the default window is the
// steps, and the pass computes each step's breakdown), and each rank's activity.
//
//  - Range families: the user and NVTX ranges of the ranks' CPU threads, by name without
//    trailing digits ("ProfilerStep#12" -> "ProfilerStep#"). Per rank, a family's ranges are
//    the outermost ones on the thread that has most of them: a range copied onto a GPU stream
//    (Kineto's gpu_user_annotation) or onto another thread never adds steps.
//  - The step family: --steps NAME; else ProfilerStep# (Kineto's profiler steps); else the
//    family whose ranges tile the largest share (at least half) of every rank's activity, with
//    at least 2 ranges on every rank. Never by name order. Docs: docs/analysis.md, Steps.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "rank_units.hpp"

namespace hpcprof::analyzer::detail {

/// The categories steps are made of: user ranges and NVTX ranges (of CPU threads).
constexpr bool isStepRangeCategory(int64_t categoryId) {
    return categoryId == int64_t(schema::Category::UserRange) || categoryId == int64_t(schema::Category::Nvtx);
}

/// Whether the trace's metadata (event_categories) says no event is of a step range category:
/// then the range scan finds nothing and the analysis may skip it (the pass still checks).
bool metadataRulesOutRanges(const Trace& trace);

struct RangeFamilies {
    /// family -> rank -> the rank's outermost ranges of the family (one thread), by start
    std::map<std::string, std::map<int64_t, std::vector<Interval>>> families;
    std::set<int64_t> rangeOnlyTracks; ///< tracks with nothing but ranges (a profiler's span)
};

/// One read per CPU thread track of the ranks (its id range, ranges kept), ranks on up to
/// `threads` workers (0: the hardware's concurrency, capped; the result is the same).
Result<RangeFamilies> scanRangeFamilies(const Trace& trace, const TraceIndex& ix, const RankUnits& ranks,
                                        int threads);

/// Sets the activity of imported ranks: first to last event of their tracks, range-only tracks
/// left out (Kineto's "PyTorch Profiler" span covers the profiler's warm-up and stop too).
Status setActivity(const Trace& trace, RankUnits& ranks, const RangeFamilies& ranges);

/// The steps from ranges (source, basis, reason, per-rank steps); empty when no family
/// qualifies (the caller then tries the collective pattern), an error when --steps names no
/// family. `option` "collectives" asks for the collective pattern: empty steps.
Result<StepStats> chooseRangeSteps(const RangeFamilies& ranges, const RankUnits& ranks, const std::string& option);

/// True when `option` (--steps) names `family`: equal, equal without the family's trailing
/// '#', or a prefix of it when `option` ends in '*'.
bool stepOptionMatches(const std::string& option, const std::string& family);

} // namespace hpcprof::analyzer::detail
