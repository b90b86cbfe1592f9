// SPDX-License-Identifier: MIT
/// RDMA traffic per rank and per queue pair (nic_queue tracks written by the verbs capture):
/// achieved bandwidth over time against the link rate read from the device attributes, the
/// small-message rate, completion-latency percentiles, and the advice rules that read them
/// (definitions in docs/rdma-capture.md and docs/advice-rules.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer {

/// Work requests below this size count as small messages.
constexpr int64_t kRdmaSmallBytes = 4096;

struct RdmaQueueStats {
    int64_t trackId = 0;
    std::optional<int64_t> rank; ///< NULL for non-rank processes
    int64_t processId = 0;
    std::string name;            ///< "mlx5_0 QP 123"
    int64_t workRequests = 0;    ///< including those folded into aggregates
    int64_t bytes = 0;
    int64_t smallWorkRequests = 0; ///< full events under kRdmaSmallBytes
    int64_t firstTs = 0, lastEnd = 0;
    int64_t linkRateMbps = 0;      ///< 0 = unknown
    double achievedGbps = 0;       ///< bytes over [firstTs, lastEnd]
    double peakBinGbps = 0;        ///< busiest time bin
    std::vector<double> gbpsOverTime; ///< per bin of RdmaAnalysis::binNs from the trace start
    std::optional<int64_t> latencyP50Ns, latencyP90Ns, latencyP99Ns, latencyMaxNs;
};

struct RdmaRankStats {
    std::optional<int64_t> rank;
    int64_t processId = 0;
    int64_t workRequests = 0, bytes = 0, smallWorkRequests = 0;
    double smallMessageRatePerS = 0; ///< small WRs per second of the rank's RDMA activity
    double achievedGbps = 0;
    int64_t linkRateMbps = 0;
};

struct RdmaAnalysis {
    int64_t binNs = 0;
    std::vector<RdmaQueueStats> queues;
    std::vector<RdmaRankStats> ranks;
    bool any() const { return !queues.empty(); }
};

/// Reads every nic_queue track. `bins`: number of time bins for the bandwidth-over-time series.
Result<RdmaAnalysis> analyzeRdma(const Trace& trace, int bins = 50);

/// Advice on RDMA traffic: rdma.small_messages (small work requests dominate) and
/// rdma.low_bandwidth (achieved bandwidth far below the link while busy).
std::vector<Finding> rdmaFindings(const RdmaAnalysis& a);

} // namespace hpcprof::analyzer
