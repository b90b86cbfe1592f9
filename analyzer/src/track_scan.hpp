// SPDX-License-Identifier: MIT
// The per-track event scan the analyses stream through (internal to the analyzer): a track's
// events are the contiguous id range [first_event_id, last_event_id], read with one rowid range
// scan, never all loaded at once.
#pragma once

#include <cstdint>
#include <vector>

#include "hpcprof/analyzer/trace_index.hpp"
#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::analyzer {

/// One event as the analyses see it. Absent optional columns are -1 (bytes, peer, seq,
/// correlation id, ...).
struct EventRecord {
    int64_t id = 0;
    int64_t ts = 0;
    int64_t dur = 0;
    int64_t bytes = -1;
    int64_t seq = -1;
    int64_t communicatorId = -1;
    int64_t objectId = -1;
    int64_t correlationId = -1; ///< joins a CUDA API call to the GPU work it launched
    int64_t nameId = 0;
    int32_t peer = -1;
    int32_t depth = 0;
    int32_t categoryId = 0;
    int32_t count = 1;
    EventClass cls = EventClass::Annotation;
    int64_t end() const { return ts + dur; }
};

/// Problems found while scanning events: counted, reported as data-quality warnings.
struct ScanQuality {
    int64_t negativeDurations = 0; ///< stored dur < 0: read as 0
    int64_t unsortedEvents = 0;    ///< ts smaller than the previous event's on the same track
    int64_t tracksWithoutIdRange = 0;
    int64_t unknownCategories = 0;
    int64_t timesOutOfRange = 0;   ///< |ts| or |dur| >= kTimeLimitNs: skipped, not passed on
    int64_t outsideRun = 0;        ///< counted by the caller, which knows the run's span
};

namespace detail {
/// Prepares the event scan of a track (by id range when known, by track id otherwise).
schema::Statement prepareTrackScan(const Trace& trace, const TrackInfo& track, bool& byRange);
/// Reads the columns of the current row every event needs (id, ts, dur, category, name, depth).
void readEventRow(const schema::Statement& s, EventRecord& e);
/// Reads the rest (bytes, object, peer, communicator, seq, count, correlation id).
void readEventDetails(const schema::Statement& s, EventRecord& e);
/// Sets the rest to "absent" (-1, count 1).
void clearEventDetails(EventRecord& e);
/// The analyses' access to the index's class table (the scan's per-event lookup).
struct TrackScan {
    static const std::vector<int8_t>& classById(const TraceIndex& ix) { return ix.m_classById; }
};
} // namespace detail

/// Calls fn(const EventRecord&) for each event of the track, in stored order. Negative
/// durations are read as 0 and counted in `quality`; events with times out of range
/// (timeInRange) are skipped and counted there. For compute and annotation events bytes,
/// objectId, peer, communicatorId, seq, count and correlationId are not read (left -1, count 1) unless
/// `detailsOf` (by category id, may be null) asks for them: skipping them is a measurable part
/// of the scan.
template <typename Fn>
Status scanTrack(const Trace& trace, const TraceIndex& index, const TrackInfo& track,
                 ScanQuality& quality, Fn&& fn, const std::vector<uint8_t>* detailsOf = nullptr) {
    const std::vector<int8_t>& classById = detail::TrackScan::classById(index);
    bool byRange = true;
    schema::Statement s = detail::prepareTrackScan(trace, track, byRange);
    if (!s.valid()) return s.error();
    if (!byRange && track.eventCount > 0) ++quality.tracksWithoutIdRange;
    EventRecord e;
    int64_t prevTs = INT64_MIN;
    while (s.step()) {
        detail::readEventRow(s, e);
        if (!timeInRange(e.ts) || !timeInRange(e.dur)) {
            ++quality.timesOutOfRange;
            continue;
        }
        if (e.dur < 0) {
            ++quality.negativeDurations;
            e.dur = 0;
        }
        if (e.ts < prevTs) ++quality.unsortedEvents;
        prevTs = e.ts;
        const int8_t cls = e.categoryId >= 0 && size_t(e.categoryId) < classById.size()
                               ? classById[size_t(e.categoryId)]
                               : int8_t(-1);
        if (cls < 0) {
            ++quality.unknownCategories;
            e.cls = EventClass::Annotation;
        } else {
            e.cls = EventClass(cls);
        }
        // Each column read is a library call; the analyses use these fields for the classes
        // below, and for the categories a data family asks them for, so other compute and
        // annotation events skip them (about a third of a scan).
        const bool asked = detailsOf && e.categoryId >= 0 && size_t(e.categoryId) < detailsOf->size() &&
                           (*detailsOf)[size_t(e.categoryId)];
        if ((e.cls == EventClass::Compute || e.cls == EventClass::Annotation) && !asked)
            detail::clearEventDetails(e);
        else
            detail::readEventDetails(s, e);
        fn(e);
    }
    return s.error();
}


} // namespace hpcprof::analyzer
