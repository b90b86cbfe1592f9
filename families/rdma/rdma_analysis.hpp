// SPDX-License-Identifier: MIT
/// RDMA traffic per rank and per queue pair (nic_queue tracks written by the verbs capture):
/// achieved bandwidth over time against the link rate read from the device attributes, the
/// small-message rate, completion-latency percentiles (definitions in docs/rdma-capture.md; the
/// rules that read them are in advice/rules_rdma.cpp).
#pragma once

#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/rdma_types.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer {

/// Reads every nic_queue track (nothing else when there is none, so traces without RDMA pay one
/// small query). `bins`: number of time bins for the bandwidth-over-time series.
Result<RdmaAnalysis> analyzeRdma(const Trace& trace, int bins = 50);

} // namespace hpcprof::analyzer
