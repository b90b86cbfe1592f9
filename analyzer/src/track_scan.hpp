// SPDX-License-Identifier: MIT
// The per-track event scan the analyses stream through (internal to the analyzer): a track's
// events are the contiguous id range [first_event_id, last_event_id], read with one rowid range
// scan, never all loaded at once.
#pragma once

#include <cstdint>
#include <vector>

#include "event_page_reader.hpp"
#include "event_record.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::analyzer {

namespace detail {
/// Prepares the event scan of a track: by its id range from id `from` on when the range is
/// known, by track id otherwise.
schema::Statement prepareTrackScan(const Trace& trace, const TrackInfo& track, int64_t from);
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

/// What every event read goes through, whichever way it was read: the checks of its times
/// (counted in the quality) and its class.
class EventAdmission {
public:
    EventAdmission(const TraceIndex& index, ScanQuality& quality, const std::vector<uint8_t>* detailsOf)
        : m_classById(TrackScan::classById(index)), m_quality(quality), m_detailsOf(detailsOf) {}

    /// false: the event is skipped (times out of range). Otherwise a negative duration is read
    /// as 0 and the class is set; both counted where the data is wrong.
    bool admit(EventRecord& e) {
        if (!timeInRange(e.ts) || !timeInRange(e.dur)) {
            ++m_quality.timesOutOfRange;
            return false;
        }
        if (e.dur < 0) {
            ++m_quality.negativeDurations;
            e.dur = 0;
        }
        if (e.ts < m_prevTs) ++m_quality.unsortedEvents;
        m_prevTs = e.ts;
        const int8_t cls = e.categoryId >= 0 && size_t(e.categoryId) < m_classById.size()
                               ? m_classById[size_t(e.categoryId)]
                               : int8_t(-1);
        if (cls < 0) ++m_quality.unknownCategories;
        e.cls = cls < 0 ? EventClass::Annotation : EventClass(cls);
        return true;
    }

    /// Whether the analyses use the event's detail columns: for every class but compute and
    /// annotation, and for the categories a data family asks them for. Through SQL, skipping
    /// the others' column reads is a measurable part of the scan.
    bool needsDetails(const EventRecord& e) const {
        if (e.cls != EventClass::Compute && e.cls != EventClass::Annotation) return true;
        return m_detailsOf && e.categoryId >= 0 && size_t(e.categoryId) < m_detailsOf->size() &&
               (*m_detailsOf)[size_t(e.categoryId)];
    }

private:
    const std::vector<int8_t>& m_classById;
    ScanQuality& m_quality;
    const std::vector<uint8_t>* m_detailsOf;
    int64_t m_prevTs = INT64_MIN;
};
} // namespace detail

/// Calls fn(const EventRecord&) for each event of the track, in stored order. Negative
/// durations are read as 0 and counted in `quality`; events with times out of range
/// (timeInRange) are skipped and counted there. For compute and annotation events bytes,
/// objectId, peer, communicatorId, seq, count and correlationId are left -1 (count 1) unless
/// `detailsOf` (by category id, may be null) asks for them: through SQL, skipping their column
/// reads is a measurable part of the scan. With `pages` (may be null) the track's id range is
/// read below SQL as far as that reader gets, the rest through SQL: the events are the same.
template <typename Fn>
Status scanTrack(const Trace& trace, const TraceIndex& index, const TrackInfo& track,
                 ScanQuality& quality, Fn&& fn, const std::vector<uint8_t>* detailsOf = nullptr,
                 const detail::EventPageReader* pages = nullptr) {
    detail::EventAdmission admission(index, quality, detailsOf);
    EventRecord e;
    const bool byRange = track.firstEventId && track.lastEventId;
    const auto from = detail::EventPageReader::readAsFarAsItGets(pages, track, e, [&](EventRecord& r) {
        if (!admission.admit(r)) return;
        if (!admission.needsDetails(r)) detail::clearEventDetails(r);
        fn(r);
    });
    if (!from) return from.status();
    if (byRange && *from > *track.lastEventId) return {};
    schema::Statement s = detail::prepareTrackScan(trace, track, *from);
    if (!s.valid()) return s.error();
    if (!byRange && track.eventCount > 0) ++quality.tracksWithoutIdRange;
    while (s.step()) {
        detail::readEventRow(s, e);
        if (!admission.admit(e)) continue;
        if (admission.needsDetails(e))
            detail::readEventDetails(s, e);
        else
            detail::clearEventDetails(e);
        fn(e);
    }
    return s.error();
}

} // namespace hpcprof::analyzer
