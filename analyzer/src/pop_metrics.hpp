// SPDX-License-Identifier: MIT
/// POP efficiency metrics from the per-rank breakdowns and the wait states: load balance,
/// communication efficiency = serialisation x transfer efficiency, parallel efficiency.
/// Definitions: docs/analysis.md, "POP metrics".
#pragma once

#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

/// Fills each rank's waitNs and transferNs from `waits` and returns the metrics, computed on each
/// rank's region between MPI_Init and MPI_Finalize, or on the whole window when `includeSetup`
/// (or when no rank has either call).
PopMetrics computePop(std::vector<RankBreakdown>& ranks, const WaitStates& waits, bool includeSetup = false);

} // namespace hpcprof::analyzer
