// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/event_query.hpp"

#include <algorithm>
#include <unordered_set>

#include "trace_access.hpp"

namespace hpcprof::analyzer {

namespace {

/// Appends the rows of `s` (id, track_id, ts, dur, name_id) as related events, skipping `self`.
void addRelated(schema::Statement& s, const char* relation, int64_t self, size_t maxRelated,
                std::vector<RelatedEvent>& out) {
    while (out.size() < maxRelated && s.step()) {
        if (s.int64(0) == self) continue;
        out.push_back({s.int64(0), s.int64(1), s.int64(2), s.int64(3), s.int64(4), relation});
    }
}

const TrackInfo* findTrack(const TraceIndex& index, int64_t trackId) {
    for (const auto& t : index.tracks())
        if (t.id == trackId) return &t;
    return nullptr;
}

Status readFields(sqlite3* db, EventDetails& d) {
    // The offset is a column of event (schema 3; a version 2 trace's is given one on open).
    schema::Statement det(db, "SELECT e.offset, d.errno, d.fd, d.tag FROM event e"
                              " LEFT JOIN event_detail d ON d.event_id = e.id WHERE e.id = ?");
    det.bind(1, d.eventId);
    if (det.step()) {
        static constexpr const char* kNames[] = {"offset", "errno", "fd", "tag"};
        for (int c = 0; c < 4; ++c)
            if (!det.isNull(c)) d.fields.emplace_back(kNames[c], std::to_string(det.int64(c)));
    }
    HPCPROF_RETURN_IF_ERROR(det.error());
    schema::Statement args(db, "SELECT key, value FROM event_arg WHERE event_id = ? ORDER BY key");
    args.bind(1, d.eventId);
    while (args.step()) d.fields.emplace_back(args.text(0), args.text(1));
    return args.error();
}

/// GPU work and the API call that launched it share a correlation id in one process: scan only
/// that process's tracks' id ranges.
Status addCorrelated(sqlite3* db, const TraceIndex& index, const TrackInfo& track, size_t maxRelated,
                     EventDetails& d) {
    schema::Statement c(db, "SELECT id, track_id, ts, dur, name_id FROM event"
                            " WHERE id BETWEEN ? AND ? AND correlation_id = ? ORDER BY ts");
    for (const TrackInfo* t : index.tracksOf(track.processId)) {
        if (!t->firstEventId || !t->lastEventId) continue;
        c.reset();
        c.bind(1, *t->firstEventId);
        c.bind(2, *t->lastEventId);
        c.bind(3, d.correlationId);
        const char* relation = t->kind == track.kind                ? "same correlation"
                               : track.kind == TrackKind::GpuStream ? "launched by"
                                                                    : "launched";
        addRelated(c, relation, d.eventId, maxRelated, d.related);
        HPCPROF_RETURN_IF_ERROR(c.error());
    }
    return {};
}

/// The same collective instance on the other members: communicator ids are per trace and the
/// instance number matches across members.
Status addSameCollective(sqlite3* db, size_t maxRelated, EventDetails& d) {
    schema::Statement c(db, "SELECT id, track_id, ts, dur, name_id FROM event"
                            " WHERE communicator_id = ? AND seq = ? ORDER BY ts");
    c.bind(1, d.communicatorId);
    c.bind(2, d.seq);
    addRelated(c, "same collective", d.eventId, maxRelated, d.related);
    return c.error();
}

} // namespace

Result<EventDetails> eventDetails(const Trace& trace, const TraceIndex& index, int64_t eventId,
                                  size_t maxRelated) {
    sqlite3* db = detail::db(trace);
    schema::Statement s(db, "SELECT id, track_id, ts, dur, category_id, name_id, depth, bytes,"
                            " object_id, peer, communicator_id, seq, correlation_id,"
                            " COALESCE(count, 1) FROM event WHERE id = ?");
    s.bind(1, eventId);
    if (!s.step())
        return s.error().ok() ? Status::error("no event " + std::to_string(eventId)) : s.error();
    auto opt = [&](int c) { return s.isNull(c) ? int64_t(-1) : s.int64(c); };
    EventDetails d;
    d.eventId = s.int64(0);
    d.trackId = s.int64(1);
    d.ts = s.int64(2);
    d.dur = s.int64(3);
    d.categoryId = s.int64(4);
    d.nameId = s.int64(5);
    d.depth = s.int64(6);
    d.bytes = opt(7);
    d.objectId = opt(8);
    d.peer = opt(9);
    d.communicatorId = opt(10);
    d.seq = opt(11);
    d.correlationId = opt(12);
    d.count = s.int64(13);
    HPCPROF_RETURN_IF_ERROR(readFields(db, d));
    const TrackInfo* track = findTrack(index, d.trackId);
    if (d.correlationId >= 0 && track)
        HPCPROF_RETURN_IF_ERROR(addCorrelated(db, index, *track, maxRelated, d));
    if (d.communicatorId >= 0 && d.seq >= 0)
        HPCPROF_RETURN_IF_ERROR(addSameCollective(db, maxRelated, d));
    return d;
}

Result<EventHits> findEvents(const Trace& trace, const TraceIndex& index, const EventFilter& filter) {
    sqlite3* db = detail::db(trace);
    std::unordered_set<int64_t> names;
    const bool anyName = !filter.nameMatches;
    if (!anyName) {
        schema::Statement s(db, "SELECT id, value FROM string");
        while (s.step())
            if (filter.nameMatches(s.text(1))) names.insert(s.int64(0));
        HPCPROF_RETURN_IF_ERROR(s.error());
    }
    EventHits out;
    if (!anyName && names.empty()) return out;
    schema::Statement ev(db, "SELECT id, ts, dur, name_id, category_id FROM event"
                             " WHERE id BETWEEN ? AND ?");
    for (const TrackInfo& t : index.tracks()) {
        if (!t.firstEventId || !t.lastEventId) continue;
        if (filter.trackMatches && !filter.trackMatches(t)) continue;
        ev.reset();
        ev.bind(1, *t.firstEventId);
        ev.bind(2, *t.lastEventId);
        while (ev.step()) {
            if (!anyName && !names.count(ev.int64(3))) continue;
            if (!(filter.classMask & (1u << unsigned(index.categoryClass(ev.int64(4)))))) continue;
            ++out.total;
            if (out.hits.size() < filter.limit)
                out.hits.push_back({ev.int64(0), t.id, ev.int64(1), ev.int64(2)});
        }
        HPCPROF_RETURN_IF_ERROR(ev.error());
    }
    std::sort(out.hits.begin(), out.hits.end(), [](const EventHit& a, const EventHit& b) {
        return a.ts != b.ts ? a.ts < b.ts : a.eventId < b.eventId;
    });
    return out;
}

Result<std::vector<EventHit>> locateEvents(const Trace& trace, const std::vector<int64_t>& eventIds) {
    schema::Statement s(detail::db(trace), "SELECT track_id, ts, dur FROM event WHERE id = ?");
    std::vector<EventHit> out;
    for (int64_t id : eventIds) {
        s.reset();
        s.bind(1, id);
        if (s.step()) out.push_back({id, s.int64(0), s.int64(1), s.int64(2)});
        HPCPROF_RETURN_IF_ERROR(s.error());
    }
    return out;
}

Result<std::optional<TimeBounds>> trackTimeBounds(const Trace& trace, const TrackInfo& track) {
    if (!track.firstEventId || !track.lastEventId) return std::optional<TimeBounds>();
    // Events are sorted by ts within a track, so the first starts earliest; the last one's end
    // bounds the track's end well (a longer earlier event still ends inside its process).
    schema::Statement s(detail::db(trace), "SELECT ts, dur FROM event WHERE id = ?");
    // Times out of range (damage, skipped by the analyses' scan too) do not stretch the run.
    auto read = [&](int64_t id, bool end) -> std::optional<int64_t> {
        s.reset();
        s.bind(1, id);
        if (!s.step() || !timeInRange(s.int64(0)) || !timeInRange(s.int64(1))) return std::nullopt;
        return end ? s.int64(0) + std::max<int64_t>(0, s.int64(1)) : s.int64(0);
    };
    std::optional<int64_t> begin = read(*track.firstEventId, false);
    std::optional<int64_t> end = read(*track.lastEventId, true);
    HPCPROF_RETURN_IF_ERROR(s.error());
    if (!begin && !end) return std::optional<TimeBounds>();
    if (!begin) begin = end; // one damaged end of the track: the other still bounds it
    if (!end) end = begin;
    return std::optional<TimeBounds>(TimeBounds{*begin, std::max(*begin, *end)});
}

Result<TimeBounds> traceTimeBounds(const Trace& trace, const TraceIndex& index) {
    TimeBounds b{INT64_MAX, INT64_MIN};
    for (const auto& p : index.processes()) {
        b.begin = std::min(b.begin, p.startTs);
        if (p.endTs) b.end = std::max(b.end, *p.endTs);
    }
    for (const auto& t : index.tracks()) {
        auto tb = trackTimeBounds(trace, t);
        if (!tb) return tb.status();
        if (!*tb) continue;
        b.begin = std::min(b.begin, (*tb)->begin);
        b.end = std::max(b.end, (*tb)->end);
    }
    if (b.begin == INT64_MAX) b.begin = 0;
    if (b.end <= b.begin) b.end = b.begin + 1;
    return b;
}

Result<std::vector<StatRow>> traceStats(const Trace& trace) {
    schema::Statement s(detail::db(trace), "SELECT name, severity, value, description FROM stats_view"
                                           " WHERE value != 0");
    std::vector<StatRow> out;
    while (s.step()) out.push_back({s.text(0), s.text(1), s.text(3), s.int64(2)});
    HPCPROF_RETURN_IF_ERROR(s.error());
    return out;
}

} // namespace hpcprof::analyzer
