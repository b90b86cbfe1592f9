// SPDX-License-Identifier: MIT
// What the GUI knows about an open trace before any timeline data is fetched: the analyzer's
// TraceIndex (processes, tracks, strings), the time bounds, counter lanes and data-quality stats.
// Loaded on a worker thread, then shared read-only (immutable) with the UI thread.
#pragma once

#include <QString>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hpcprof/analyzer/timeline_query.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
#include "models/class_mipmap.hpp"
#include "models/time_axis.hpp"

namespace hpcprof::gui {

struct CounterTrackInfo {
    int64_t id = 0, processId = 0;
    QString name, unit;
    bool perThread = false; ///< a thread's counter (tid set), not a process-wide one
    bool mainThread = false; ///< counted on the process's main thread (tid = pid)
};

/// A non-zero row of the trace's stats table.
struct StatRow {
    QString name, severity, description;
    int64_t value = 0;
};

struct TraceData {
    std::string path;
    uint64_t sessionId = 0; ///< unique per load: keys the per-thread connection cache
    analyzer::TraceIndex index;
    TimeWindow bounds;      ///< hull of process lifetimes and events
    std::vector<CounterTrackInfo> counters;
    std::vector<StatRow> stats; ///< non-zero stats, data_loss and error first
    int64_t rankCount = 0, events = 0;

    /// Rank of a process, -1 for non-rank processes.
    int64_t rankOf(int64_t processId) const;
    const analyzer::TrackInfo* track(int64_t trackId) const;
    bool hasDataLoss() const;
};

using TraceDataPtr = std::shared_ptr<const TraceData>;

/// Opens and indexes a trace (worker thread). Errors are one-line messages for people.
Result<TraceDataPtr> loadTraceData(const std::string& path);

/// The calling thread's own read-only connection to the trace of `data` (a Trace is
/// single-threaded, so each worker thread keeps one per trace). Never call on the UI thread.
Result<const analyzer::Trace*> threadTrace(const TraceData& data);

/// The calling thread's TimelineQuery on that connection: it caches each track's longest event,
/// a full scan of the track, so it must outlive single fetches.
Result<analyzer::TimelineQuery*> threadTimelineQuery(const TraceData& data);

/// The calling thread's class-share query (ranks, their tracks and reference timelines).
Result<analyzer::ClassShareQuery*> threadClassShares(const TraceData& data);
/// The trace's whole-run class mipmap: from the cache file next to the trace, else built from
/// the events (one read of every track) and written there. Kept per thread and trace.
Result<ClassMipmapPtr> threadClassMipmap(const TraceData& data);

} // namespace hpcprof::gui
