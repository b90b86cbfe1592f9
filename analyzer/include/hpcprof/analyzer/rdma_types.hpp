// SPDX-License-Identifier: MIT
/// Result structs of the RDMA analysis (families/rdma/rdma_analysis.hpp), part of every Analysis: per queue
/// pair and per rank traffic of the nic_queue tracks, and the traffic per MPI/NCCL call that
/// posted it. Empty (any() false) for traces without RDMA work requests. docs/rdma-capture.md
/// defines every number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

/// Work requests attributed to the MPI/NCCL call that was running when they were posted
/// (event_args caused_by, caused_by_communicator, caused_by_seq); call "" = not attributed.
struct RdmaCause {
    std::string call;         ///< "MPI_Allreduce", "ncclAllReduce"; "" = no call in flight
    std::string communicator; ///< communicator key, "" when none
    int64_t instances = 0;    ///< distinct instances (caused_by_seq) of that call
    int64_t workRequests = 0, bytes = 0;
};

struct RdmaAnalysis {
    int64_t binNs = 0;
    std::vector<RdmaQueueStats> queues; ///< by rank, then track id
    std::vector<RdmaRankStats> ranks;   ///< by process id
    std::vector<RdmaCause> causes;      ///< bytes descending, then call and communicator
    bool any() const { return !queues.empty(); }
};

} // namespace hpcprof::analyzer
