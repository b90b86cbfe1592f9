// SPDX-License-Identifier: MIT
/// The time classes of a rank (and of each of its tracks) per time bucket: the data of the
/// timeline's summary rows and of its class mipmap (docs/gui.md, "Honest pixels").
///
/// A rank's buckets are its exclusive breakdown (docs/analysis.md, "Attribution") cut into
/// buckets: at every instant exactly one class holds, so nested and overlapping events never
/// count twice and a CPU rank's main thread outside any recorded call is compute. A track's
/// buckets apply the same priority to the track alone: compute events (or, on a CPU rank's main
/// thread, the time outside any call), then setup, communication, I/O, memory and sync; the rest
/// of the bucket is idle. Annotations (NVTX, CUDA API calls, CPU ops) are never counted.
///
/// Complexity: a query reads the events of the rank's tracks that overlap the window (binary
/// search on the id range, TimelineQuery), builds the interval sets (O(n log n)) and measures
/// each bucket (O(buckets · log n)).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/timeline_query.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::analyzer {

/// Nanoseconds of each TimeClass in each of `buckets` buckets of `bucketNs` from `begin`; the
/// classes of a bucket add up to bucketNs.
struct ClassBuckets {
    int64_t begin = 0, bucketNs = 1;
    int buckets = 0;
    std::vector<int64_t> ns; ///< buckets * kTimeClassCount, by bucket then TimeClass
    int64_t at(int bucket, TimeClass c) const { return ns[size_t(bucket) * kTimeClassCount + size_t(c)]; }
};

struct RankClassBuckets {
    int64_t rank = 0;
    bool gpu = false;
    ClassBuckets summary;                   ///< the rank's exclusive breakdown per bucket
    std::map<int64_t, ClassBuckets> tracks; ///< by track id (when asked for)
};

class ClassShareQuery {
public:
    /// The ranks of the trace (as the analysis finds them: processes with a rank, else main
    /// processes) with their tracks and reference timelines.
    static Result<std::unique_ptr<ClassShareQuery>> open(const Trace& trace, const TraceIndex& index);
    ~ClassShareQuery();

    /// Rank numbers, ascending.
    std::vector<int64_t> ranks() const;
    /// The rank a process belongs to (an exec'ed image keeps its rank), if it is one.
    std::optional<int64_t> rankOfProcess(int64_t processId) const;

    /// Whether the track is a CPU rank's main thread (its reference timeline): its time outside
    /// any recorded call is the rank's compute.
    bool gapsAreCompute(int64_t trackId) const;

    /// Rank `rank`'s classes in `buckets` buckets of `bucketNs` from `begin`; with `tracks`, each
    /// of its tracks' too (from the same read of the events).
    Result<RankClassBuckets> rank(int64_t rank, int64_t begin, int64_t bucketNs, int buckets, bool tracks);

    /// Every rank's classes (with `tracks`, its tracks' too) on one grid, the same figures as
    /// rank() gives rank by rank, built for the whole run at once (the class mipmap): each track
    /// is read in one sweep of its id range (no search for the window's first event, no pass
    /// for the longest event), ranks spread over `threads` workers with a connection each (0:
    /// the machine's cores, at most 8; their connections are kept for later calls). `sink` gets each rank as it completes, from the worker
    /// that built it (so it must be thread-safe), in no particular order; the buckets are not
    /// kept, so a thousand ranks never hold all their int64 buckets at once.
    Status allRanks(int64_t begin, int64_t bucketNs, int buckets, bool tracks, int threads,
                    const std::function<void(RankClassBuckets&&)>& sink);

    /// rank() for several ranks at once (the summary rows of a zoomed-in view), spread over
    /// the same workers as allRanks, all cores but one (left to the UI that paints meanwhile);
    /// `sink` as there.
    Status ranks(const std::vector<int64_t>& ranks, int64_t begin, int64_t bucketNs, int buckets, bool tracks,
                 const std::function<void(RankClassBuckets&&)>& sink);

    struct Units;

private:
    /// Runs job(i, connection, query) for i in [0, count) on up to `threads` workers (0: the
    /// machine's cores, at most 8): this thread with the query's connection, the others with
    /// connections opened on first use and kept. The first error stops the rest.
    Status forEachUnit(size_t count, int threads,
                       const std::function<Status(size_t, const Trace&, TimelineQuery&)>& job);

    ClassShareQuery(const Trace& trace, const TraceIndex& index);
    const Trace& m_trace;
    const TraceIndex& m_index;
    TimelineQuery m_query;
    std::unique_ptr<Units> m_units;
};

} // namespace hpcprof::analyzer
