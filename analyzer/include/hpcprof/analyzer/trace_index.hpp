// SPDX-License-Identifier: MIT
/// The small tables of a trace held in memory (processes, tracks, categories, strings,
/// communicators, objects) and the per-track event scan that analyses stream through. Events are
/// never all loaded at once: a track's events are the contiguous id range
/// [first_event_id, last_event_id], read with a rowid range scan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

/// Attribution class of a category (the category table's `class` column).
enum class EventClass : uint8_t { Compute, Communication, Io, Memory, Sync, Annotation };

/// Name of a class as stored in the trace ("communication", ...).
const char* eventClassName(EventClass c);

enum class TrackKind : uint8_t { CpuThread, GpuStream, NicQueue };

struct ProcessInfo {
    int64_t id = 0;
    std::optional<int64_t> rank;
    std::optional<int64_t> worldSize;
    int64_t pid = 0;
    std::string host;
    std::string command;
    int64_t startTs = 0;
    std::optional<int64_t> endTs;
};

struct TrackInfo {
    int64_t id = 0;
    int64_t processId = 0;
    std::optional<int64_t> tid; ///< OS thread id for CPU tracks
    TrackKind kind = TrackKind::CpuThread;
    std::string name;
    std::optional<int64_t> device, stream;
    std::optional<int64_t> firstEventId, lastEventId;
    int64_t eventCount = 0;
};

struct CommunicatorInfo {
    std::string key;
    std::optional<int64_t> size;
    std::string kind;
};

/// One event as the analyses see it. Absent optional columns are -1 (bytes, peer, seq, ...).
/// Columns no analysis reads (correlation_id) are not fetched by the scan.
struct EventRecord {
    int64_t id = 0;
    int64_t ts = 0;
    int64_t dur = 0;
    int64_t bytes = -1;
    int64_t seq = -1;
    int64_t communicatorId = -1;
    int64_t objectId = -1;
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

/// Times a trace can hold: |ts| and |dur| below 2^62 ns (146 years). Rows beyond are damage;
/// the scan skips them, so ts + dur never overflows in an analysis.
inline constexpr int64_t kTimeLimitNs = int64_t(1) << 62;
inline bool timeInRange(int64_t ns) { return ns > -kTimeLimitNs && ns < kTimeLimitNs; }

class TraceIndex {
public:
    static Result<TraceIndex> load(const Trace& trace);

    const std::vector<ProcessInfo>& processes() const { return m_processes; }
    const std::vector<TrackInfo>& tracks() const { return m_tracks; }
    /// Tracks of one process, in id order.
    std::vector<const TrackInfo*> tracksOf(int64_t processId) const;

    const std::string& string(int64_t id) const;
    const std::string& categoryName(int64_t categoryId) const;
    EventClass categoryClass(int64_t categoryId) const;
    const CommunicatorInfo* communicator(int64_t id) const;
    /// Path or name of an object (the file of an I/O call).
    const std::string& objectName(int64_t objectId) const;
    /// Total number of events over all tracks (from the track table).
    int64_t eventCount() const;

    /// Calls fn(const EventRecord&) for each event of the track, in stored order. Negative
    /// durations are read as 0 and counted in `quality`; events with times out of range
    /// (timeInRange) are skipped and counted there. For compute and annotation events
    /// bytes, objectId, peer, communicatorId, seq and count are not read (left -1, count 1):
    /// no analysis uses them there, and skipping them is a measurable part of the scan.
    template <typename Fn>
    Status scanTrack(const Trace& trace, const TrackInfo& track, ScanQuality& quality, Fn&& fn) const;

private:
    std::vector<ProcessInfo> m_processes;
    std::vector<TrackInfo> m_tracks;
    std::vector<std::string> m_strings;
    std::unordered_map<int64_t, std::pair<std::string, EventClass>> m_categories;
    std::vector<int8_t> m_classById; ///< EventClass by category id, -1 = unknown (the scan's lookup)
    std::unordered_map<int64_t, CommunicatorInfo> m_communicators;
    std::unordered_map<int64_t, int64_t> m_objects; ///< object id -> name string id
};

namespace detail {
/// Prepares the event scan of a track (by id range when known, by track id otherwise).
schema::Statement prepareTrackScan(const Trace& trace, const TrackInfo& track, bool& byRange);
/// Reads the columns of the current row every event needs (id, ts, dur, category, name, depth).
void readEventRow(const schema::Statement& s, EventRecord& e);
/// Reads the rest (bytes, object, peer, communicator, seq, count).
void readEventDetails(const schema::Statement& s, EventRecord& e);
/// Sets the rest to "absent" (-1, count 1).
void clearEventDetails(EventRecord& e);
} // namespace detail

template <typename Fn>
Status TraceIndex::scanTrack(const Trace& trace, const TrackInfo& track, ScanQuality& quality,
                             Fn&& fn) const {
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
        const int8_t cls = e.categoryId >= 0 && size_t(e.categoryId) < m_classById.size()
                               ? m_classById[size_t(e.categoryId)]
                               : int8_t(-1);
        if (cls < 0) {
            ++quality.unknownCategories;
            e.cls = EventClass::Annotation;
        } else {
            e.cls = EventClass(cls);
        }
        // Each column read is a library call; the analyses use these fields only for the
        // classes below, so compute and annotation events skip them (about a third of a scan).
        if (e.cls == EventClass::Compute || e.cls == EventClass::Annotation)
            detail::clearEventDetails(e);
        else
            detail::readEventDetails(s, e);
        fn(e);
    }
    return s.error();
}

} // namespace hpcprof::analyzer
