// SPDX-License-Identifier: MIT
// Kernel statistics of one rank (the gpu family's scan feeds it): per kernel name count, total,
// min, max, mean and standard deviation; launch latency per name and per rank; launch-queue
// depth over the window; copy bandwidth by direction; the kernel classes' time and overlaps.
//
// Memory: per name and per copy direction, a fixed-size accumulator (Welford's running mean and
// squared deviations: no per-event storage). Launch latency and queue depth need each launch:
// while a rank is scanned, 16 bytes per CUDA API call with a correlation id and 24 per kernel;
// finish() joins them and frees them, keeping only the rank's latencies (8 bytes per launched
// kernel, sorted), which the exact job-wide percentiles need until combine(). Nothing else grows
// with the number of events.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "family_analysis.hpp"
#include "gpu_section.hpp"

namespace hpcprof::analyzer {

/// Nearest-rank percentile `p` (0..100) of sorted values (0 when empty).
int64_t nearestRank(const std::vector<int64_t>& sorted, int p);
/// Count, mean, median, p95, max and negatives of sorted latencies.
LatencyStats latencyStats(const std::vector<int64_t>& sorted);

/// A kernel as the launch join needs it.
struct LaunchedKernel {
    int64_t correlationId, ts, key; ///< key: the kernel's name/class key (KernelStats)
};

/// The launch side of a rank: each kernel joined to its API call by correlation id.
struct LaunchJoin {
    std::vector<std::pair<int64_t, int64_t>> launches; ///< (launch ts, kernel start), by launch
    std::vector<std::pair<int64_t, int64_t>> byKey;    ///< (key, latency), sorted
    std::vector<int64_t> latencies;                    ///< sorted
    int64_t unmatched = 0;
};

/// Joins kernels to calls (correlation id, ts); a kernel takes the earliest call of its id.
LaunchJoin joinLaunches(std::vector<std::pair<int64_t, int64_t>>& calls,
                        const std::vector<LaunchedKernel>& kernels);

/// Queue depth over `window` from (launch ts, kernel start) pairs in `buckets` parts of its span.
QueueDepthStats queueDepth(const std::vector<std::pair<int64_t, int64_t>>& launches,
                           const IntervalSet& window, int buckets);

class KernelStats {
public:
    explicit KernelStats(const Trace& trace);

    /// Reads the copy directions of a GPU track's copies (one range read of event_arg).
    void beginTrack(const TrackInfo& t, bool gpuTrack);
    void onApi(const EventRecord& e);
    void onKernel(const EventRecord& e, KernelClass cls);
    void onCopy(const EventRecord& e, bool memset);
    /// The rank's result (names still as ids: see nameIds), after its events.
    void finish(const RankEnd& end);

    bool empty() const { return m_result.kernels.empty() && m_result.copies.empty(); }
    GpuKernelRank& result() { return m_result; }
    /// The name id of each entry of result().kernels, in the same order.
    const std::vector<int64_t>& nameIds() const { return m_nameIds; }
    /// The rank's launch latencies, sorted (for the job-wide percentiles).
    std::vector<int64_t>& latencies() { return m_latencies; }

    /// Time-series buckets of the launch-queue depth over the window.
    static constexpr int kQueueBuckets = 60;

private:
    struct NameAcc {
        int64_t count = 0, totalNs = 0, minNs = INT64_MAX, maxNs = INT64_MIN;
        double mean = 0, m2 = 0; ///< Welford
    };
    void finishNames(const LaunchJoin& join);
    void finishClasses(const RankEnd& end);

    schema::Statement m_copyKinds;
    std::vector<std::pair<int64_t, std::string>> m_trackCopyKinds; ///< (event id, kind), sorted
    std::unordered_map<int64_t, NameAcc> m_names; ///< key: name id * 2 + communication
    std::vector<std::pair<int64_t, int64_t>> m_calls; ///< (correlation id, ts) of API calls
    std::vector<LaunchedKernel> m_kernels;
    std::map<std::string, CopyDirectionStats> m_copies;
    int64_t m_classCount[kKernelClassCount] = {}, m_classNs[kKernelClassCount] = {};
    GpuKernelRank m_result;
    std::vector<int64_t> m_nameIds;
    std::vector<int64_t> m_latencies;
};

/// Adds a finished rank to the section (names resolved, kernels by total time) unless it had no
/// kernels or copies; moves its latencies to the end of `latencies`.
void addKernelRank(const TraceIndex& index, KernelStats& rank, GpuSection& section,
                   std::vector<int64_t>& latencies);
/// The job-wide launch latency (from every rank's latencies) and copies by direction.
void finishKernelSection(GpuSection& section, std::vector<int64_t>& latencies);

} // namespace hpcprof::analyzer
