// SPDX-License-Identifier: MIT
/// RDMA traffic per rank and per queue pair (nic_queue tracks written by the verbs capture):
/// achieved bandwidth over time against the link rate read from the device attributes, the
/// small-message rate, completion-latency percentiles, and the advice rules that read them
/// (definitions in docs/rdma-capture.md and docs/advice-rules.md).
#pragma once

#include <vector>

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/rdma_types.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer {

/// Reads every nic_queue track (nothing else when there is none, so traces without RDMA pay one
/// small query). `bins`: number of time bins for the bandwidth-over-time series.
Result<RdmaAnalysis> analyzeRdma(const Trace& trace, int bins = 50);

/// Advice on RDMA traffic: rdma-small-messages (small work requests dominate) and
/// rdma-low-bandwidth (achieved bandwidth far below the link while busy).
std::vector<Finding> rdmaFindings(const RdmaAnalysis& a);

/// The two RDMA rules for ruleCatalog() (they read Analysis::rdma).
std::vector<Rule> rdmaRules();

} // namespace hpcprof::analyzer
