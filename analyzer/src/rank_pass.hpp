// SPDX-License-Identifier: MIT
// Internal: the per-rank pass of analyzeTrace (one scan over a rank's tracks: its interval sets,
// attribution and step ranges, each event handed to the data families that want its category)
// and the driver that runs it for all ranks on worker threads. Each rank's result is self-contained, so the caller merges them in rank
// order and the outcome does not depend on the number of workers.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "family_analysis.hpp"
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
    /// First to last activity: the active span's hull for processes hpcprof captured (their
    /// lives), the hull of the tracks' events but those of range-only tracks for imported ones.
    Interval activity{0, 0};
    bool imported = false;               ///< every process imported from a profiler's trace
    std::map<int64_t, Interval> trackBounds; ///< track id -> [first event ts, last event end)
    IntervalSet window;
    std::vector<Interval> steps; ///< the rank's steps from ranges (their breakdown is computed)
    std::optional<int64_t> recordingStoppedTs; ///< the window was cut here (see analyze.cpp)
    std::string stopReason;
};

/// What one rank's pass produces.
struct RankPass {
    Status status;
    RankBreakdown breakdown;
    /// Per step of RankUnit::steps: the exclusive breakdown inside it.
    std::vector<RankStep> steps;
    ScanQuality quality;
    /// Whether a CPU thread of the rank has user or NVTX ranges (the analysis skipped their
    /// scan because the trace's metadata said there are none: it checks here).
    bool rangeEventsSeen = false;
    /// Each data family's scan of the rank, by analysisFamilies() index (null: it has none).
    std::vector<std::unique_ptr<RankScan>> scans;
};

/// Read-only inputs shared by every rank's pass.
struct PassContext {
    const TraceIndex* index = nullptr;
    int64_t jobBegin = 0, jobEnd = 0; ///< the job window, for the overview strip
    int overviewBuckets = 100;
    const std::vector<std::unique_ptr<AnalysisFamily>>* families = nullptr;
    /// Called with each rank's result as soon as its pass ended without error (on the worker
    /// that ran it, one call at a time): the families' folds take what they keep from the scans.
    std::function<void(RankPass&)> rankDone;
};

/// Runs worker(conn, next) on up to `threads` threads (0: the hardware's concurrency, capped),
/// at most one per item: the caller's thread with `trace`, the others each with their own
/// read-only connection (when one cannot be opened the thread is simply not used). Each worker
/// takes items by `next.fetch_add(1)` until it reaches `items`, so a big item does not stall
/// the others.
void onWorkers(const Trace& trace, size_t items, int threads,
               const std::function<void(const Trace& conn, std::atomic<size_t>& next)>& worker);

/// Runs the pass of every unit, with up to `threads` workers (0: the hardware's concurrency,
/// capped). Workers other than the caller's open their own read-only connection to the trace;
/// when that fails they are simply not used. out[i] is the result of units[i].
void runRankPasses(const Trace& trace, const PassContext& ctx, const std::vector<const RankUnit*>& units,
                   int threads, std::vector<RankPass>& out);

} // namespace hpcprof::analyzer::detail
