// SPDX-License-Identifier: MIT
/// Step detection: from user/NVTX ranges whose name contains "step" (e.g. Kineto's
/// "ProfilerStep#12"), else from the repeating pattern of collective calls. Per-step times are
/// the slowest rank's; the spread is max minus min over ranks. Definitions: docs/analysis.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "collective_runs.hpp"
#include "intervals.hpp"

namespace hpcprof::analyzer {

/// Steps from ranges: the i-th range of every rank (by start) is step i.
StepStats stepsFromRanges(const std::map<int64_t, std::vector<Interval>>& rangesByRank,
                          const std::string& name);

/// Steps from the smallest period p (>= 1) with which the leader rank's sequence of collective
/// names repeats exactly (at least 3 repetitions); each rank's step k starts at its own call of
/// the instance that starts the leader's step k. Empty when no period is found. The calls are
/// `runs`' and `extra`'s (calls of any ranks, listed after a rank's run), read one rank at a
/// time; beyond `maxRankStepItems` rank-steps each rank lists only its `slowestRankSteps`
/// slowest (limitRankSteps).
Result<StepStats> stepsFromCollectives(const detail::CollectiveRuns& runs, const std::vector<CollectiveCall>& extra,
                                       size_t maxRankStepItems, size_t slowestRankSteps);

/// When the job has more than `limit` rank-steps, each rank keeps only its `slowest` slowest
/// steps (by index; its count and statistics stay those of all its steps).
void limitRankSteps(StepStats& s, size_t limit, size_t slowest);

/// Fills mean/min/max/stddev/cv from the steps.
void summarizeSteps(StepStats& s);

/// "ProfilerStep#12" -> "ProfilerStep#": trailing digits removed (the name of a step family).
std::string stepFamilyName(const std::string& name);

} // namespace hpcprof::analyzer
