// SPDX-License-Identifier: MIT
/// Queries behind an interactive view of a trace: one event with everything known about it,
/// search over names, classes and tracks, where a set of events lies, the trace's time bounds
/// and its data-quality rows. The GUI asks these (never SQL of its own), so the internal tables
/// can change under it.
///
/// All of them read a track's events as its contiguous id range (there is deliberately no index
/// on event): cost is a few primary-key reads per event asked for, or one range scan per track
/// searched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::analyzer {

/// An event correlated with another one.
struct RelatedEvent {
    int64_t eventId = 0, trackId = 0, ts = 0, dur = 0, nameId = 0;
    /// "launched" (API call -> GPU work), "launched by" (the reverse), "same correlation",
    /// "same collective" (the other members' calls of one collective instance).
    std::string relation;
};

/// Every column of one event, names left as ids (resolve them through the TraceIndex).
/// Absent optional columns are -1.
struct EventDetails {
    int64_t eventId = 0, trackId = 0, ts = 0, dur = 0, categoryId = 0, nameId = 0, depth = 0;
    int64_t bytes = -1, objectId = -1, peer = -1, communicatorId = -1, seq = -1;
    int64_t correlationId = -1, count = 1;
    /// The event's detail columns that are set (offset, errno, fd, tag), then its free-form
    /// arguments by key.
    std::vector<std::pair<std::string, std::string>> fields;
    std::vector<RelatedEvent> related; ///< at most the limit asked for
};

/// Reads event `eventId` with at most `maxRelated` correlated events: GPU work and the API call
/// that launched it (same process), the other members' calls of the same collective instance.
Result<EventDetails> eventDetails(const Trace& trace, const TraceIndex& index, int64_t eventId,
                                  size_t maxRelated = 64);

/// What findEvents() looks for; empty predicates match everything.
struct EventFilter {
    std::function<bool(const std::string&)> nameMatches; ///< tested once per distinct name
    uint32_t classMask = ~0u;                            ///< bit (1 << EventClass)
    std::function<bool(const TrackInfo&)> trackMatches;  ///< which tracks to scan
    size_t limit = 100000;                               ///< hits kept (all are counted)
};

struct EventHit {
    int64_t eventId = 0, trackId = 0, ts = 0, dur = 0;
};

struct EventHits {
    std::vector<EventHit> hits; ///< by ts, then id; at most the filter's limit
    int64_t total = 0;          ///< every match
    bool truncated() const { return total > int64_t(hits.size()); }
};

/// Events matching `filter`: names are matched in the string table first, then only the chosen
/// tracks are scanned.
Result<EventHits> findEvents(const Trace& trace, const TraceIndex& index, const EventFilter& filter);

/// Where events are: one hit per id found, in the order asked (ids not in the trace are left
/// out).
Result<std::vector<EventHit>> locateEvents(const Trace& trace, const std::vector<int64_t>& eventIds);

struct TimeBounds {
    int64_t begin = 0, end = 0; ///< end exclusive, ns from the trace origin
};

/// First start and last end of a track's events (two primary-key reads); nullopt when it has
/// none.
Result<std::optional<TimeBounds>> trackTimeBounds(const Trace& trace, const TrackInfo& track);

/// Hull of every process lifetime and track's events; at least 1 ns long.
Result<TimeBounds> traceTimeBounds(const Trace& trace, const TraceIndex& index);

/// A data-quality counter of the trace (a non-zero row of stats_view).
struct StatRow {
    std::string name, severity, description; ///< severity: info, data_loss or error
    int64_t value = 0;
};

/// The trace's non-zero data-quality counters, in stats order.
Result<std::vector<StatRow>> traceStats(const Trace& trace);

} // namespace hpcprof::analyzer
