// SPDX-License-Identifier: MIT
/// Step detection: from user/NVTX ranges whose name contains "step" (e.g. Kineto's
/// "ProfilerStep#12"), else from the repeating pattern of collective calls. Per-step times are
/// the slowest rank's; the spread is max minus min over ranks. Definitions: docs/analysis.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "intervals.hpp"

namespace hpcprof::analyzer {

/// Steps from ranges: the i-th range of every rank (by start) is step i.
StepStats stepsFromRanges(const std::map<int64_t, std::vector<Interval>>& rangesByRank,
                          const std::string& name);

/// Steps from the smallest period p (>= 1) with which the leader rank's sequence of collective
/// names repeats exactly (at least 3 repetitions); each rank's step k starts at its own call of
/// the instance that starts the leader's step k. Empty when no period is found.
StepStats stepsFromCollectives(const CollectiveCalls& calls);

/// Fills mean/min/max/stddev/cv from the steps.
void summarizeSteps(StepStats& s);

/// "ProfilerStep#12" -> "ProfilerStep#": trailing digits removed (the name of a step family).
std::string stepFamilyName(const std::string& name);

} // namespace hpcprof::analyzer
