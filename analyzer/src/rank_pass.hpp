// SPDX-License-Identifier: MIT
// Internal: the per-rank pass of analyzeTrace (one scan over a rank's tracks: its interval sets,
// attribution, facts, collective and message calls) and the driver that runs it for all ranks
// on worker threads. Each rank's result is self-contained, so the caller merges them in rank
// order and the outcome does not depend on the number of workers.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "intervals.hpp"
#include "track_scan.hpp"

namespace hpcprof::analyzer::detail {

/// One rank: its processes and tracks, its reference timeline and window.
struct RankUnit {
    int64_t rank = 0;
    std::vector<const ProcessInfo*> processes;
    std::vector<const TrackInfo*> tracks;
    std::set<int64_t> referenceTracks; ///< CPU main-thread tracks
    bool gpu = false;
    IntervalSet active;
    IntervalSet window;
    std::optional<int64_t> recordingStoppedTs; ///< the window was cut here (see analyze.cpp)
    std::string stopReason;
};

/// Per-name totals for a top-N list; merging is a sum, so the order ranks are added in does
/// not matter.
struct TopAccumulator {
    std::unordered_map<int64_t, TopItem> items;
    void add(int64_t key, int64_t dur, int64_t bytes) {
        TopItem& t = items[key];
        ++t.count;
        t.totalNs += dur;
        t.maxNs = std::max(t.maxNs, dur);
        if (bytes > 0) t.bytes += bytes;
    }
    void merge(const TopAccumulator& other);
    /// The n largest by total time, ties by key.
    std::vector<TopItem> top(size_t n, const std::function<std::string(int64_t)>& name) const;
};

/// What one rank's pass produces.
struct RankPass {
    Status status;
    RankBreakdown breakdown;
    std::vector<CollectiveCall> collectives; ///< the rank's instances (GPU side when it has one)
    std::vector<P2pCall> messages;           ///< in scan order
    /// Step range family -> the rank's outermost ranges of that family.
    std::map<std::string, std::vector<Interval>> stepRanges;
    TopAccumulator topKernels, topCollectives, topFiles;
    ScanQuality quality;
};

/// Read-only inputs shared by every rank's pass.
struct PassContext {
    const TraceIndex* index = nullptr;
    int64_t jobBegin = 0, jobEnd = 0; ///< the job window, for the overview strip
    int overviewBuckets = 100;
};

/// Runs the pass of every unit, with up to `threads` workers (0: the hardware's concurrency,
/// capped). Workers other than the caller's open their own read-only connection to the trace;
/// when that fails they are simply not used. out[i] is the result of units[i].
void runRankPasses(const Trace& trace, const PassContext& ctx, const std::vector<const RankUnit*>& units,
                   int threads, std::vector<RankPass>& out);

} // namespace hpcprof::analyzer::detail
