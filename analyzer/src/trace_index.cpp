// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/trace_index.hpp"
#include "file_class.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "trace_access.hpp"
#include "track_scan.hpp"

#include <algorithm>

namespace hpcprof::analyzer {

namespace {
std::optional<int64_t> optInt(const schema::Statement& s, int col) {
    if (s.isNull(col)) return std::nullopt;
    return s.int64(col);
}

EventClass classFromName(const std::string& c) {
    if (c == "compute") return EventClass::Compute;
    if (c == "communication") return EventClass::Communication;
    if (c == "io") return EventClass::Io;
    if (c == "memory") return EventClass::Memory;
    if (c == "sync") return EventClass::Sync;
    if (c == "setup") return EventClass::Setup;
    return EventClass::Annotation;
}

/// Traces written before the setup class existed store MPI and NCCL set-up as communication;
/// a category the catalog now files as setup is read as setup, so old traces are analysed the
/// same way as new ones.
EventClass catalogClass(const std::string& category, EventClass stored) {
    for (const auto& c : schema::kCategories)
        if (c.name == category && c.className == "setup") return EventClass::Setup;
    return stored;
}

// --- The tables TraceIndex::load reads, one function each. ---

Status readProcesses(sqlite3* db, std::vector<ProcessInfo>& processes) {
    schema::Statement s(db, "SELECT id, rank, world_size, pid, host, COALESCE(command, ''),"
                            " start_ts, end_ts, COALESCE(cwd, ''), end_state = 'exec', COALESCE(rank_source, ''), ppid,"
                            " parent_process_id, clock_method IN ('recorded', 'nccl_collectives') FROM process ORDER BY id");
    while (s.step()) {
        ProcessInfo p;
        p.id = s.int64(0);
        p.rank = optInt(s, 1);
        p.worldSize = optInt(s, 2);
        p.pid = s.int64(3);
        p.host = s.text(4);
        p.command = s.text(5);
        p.startTs = s.int64(6);
        p.endTs = optInt(s, 7);
        p.cwd = s.text(8);
        p.execed = !s.isNull(9) && s.int64(9) != 0;
        p.rankSource = s.text(10);
        p.ppid = optInt(s, 11);
        p.parentProcessId = optInt(s, 12);
        p.imported = !s.isNull(13) && s.int64(13) != 0;
        processes.push_back(std::move(p));
    }
    return s.error();
}

TrackKind trackKindFromName(const std::string& kind) {
    return kind == "gpu_stream"  ? TrackKind::GpuStream
           : kind == "nic_queue" ? TrackKind::NicQueue
                                 : TrackKind::CpuThread;
}

/// The track query; traces written before threads said when they stopped recording lack those
/// columns, which then read as NULL.
std::string trackQuery(sqlite3* db) {
    bool stopColumns = false;
    {
        schema::Statement c(db, "SELECT COUNT(*) FROM pragma_table_info('thread')"
                                " WHERE name = 'recording_stopped_ts'");
        stopColumns = c.step() && c.int64(0) > 0;
    }
    std::string sql = "SELECT t.id, t.process_id, th.tid, t.kind, t.name, t.device, t.stream,"
                      " t.first_event_id, t.last_event_id, t.event_count, ";
    sql += stopColumns ? "th.recording_stopped_ts, th.stop_reason" : "NULL, NULL";
    sql += " FROM track t LEFT JOIN thread th ON th.id = t.thread_id ORDER BY t.id";
    return sql;
}

Status readTracks(sqlite3* db, std::vector<TrackInfo>& tracks) {
    schema::Statement s(db, trackQuery(db));
    while (s.step()) {
        TrackInfo t;
        t.id = s.int64(0);
        t.processId = s.int64(1);
        t.tid = optInt(s, 2);
        t.kind = trackKindFromName(s.text(3));
        t.name = s.text(4);
        t.device = optInt(s, 5);
        t.stream = optInt(s, 6);
        t.firstEventId = optInt(s, 7);
        t.lastEventId = optInt(s, 8);
        t.eventCount = s.int64(9);
        t.recordingStoppedTs = optInt(s, 10);
        if (t.recordingStoppedTs) t.stopReason = s.text(11);
        tracks.push_back(std::move(t));
    }
    return s.error();
}

/// Strings by id in a dense vector (string ids are small).
Status readStrings(sqlite3* db, std::vector<std::string>& strings) {
    schema::Statement s(db, "SELECT id, value FROM string");
    while (s.step()) {
        int64_t id = s.int64(0);
        if (id < 0 || id > (int64_t(1) << 31)) continue; // not a usable index
        if (size_t(id) >= strings.size()) strings.resize(size_t(id) + 1);
        strings[size_t(id)] = s.text(1);
    }
    return s.error();
}

Status readCategories(sqlite3* db, std::unordered_map<int64_t, std::pair<std::string, EventClass>>& categories,
                      std::vector<int8_t>& classById) {
    schema::Statement s(db, "SELECT id, name, class FROM category");
    while (s.step()) {
        const int64_t id = s.int64(0);
        const EventClass cls = catalogClass(s.text(1), classFromName(s.text(2)));
        categories[id] = {s.text(1), cls};
        if (id >= 0 && id < 65536) { // category ids are small; others take the unknown path
            if (size_t(id) >= classById.size()) classById.resize(size_t(id) + 1, -1);
            classById[size_t(id)] = int8_t(cls);
        }
    }
    return s.error();
}

Status readCommunicators(sqlite3* db, std::unordered_map<int64_t, CommunicatorInfo>& communicators) {
    schema::Statement s(db, "SELECT id, key, size, COALESCE(kind, '') FROM communicator");
    while (s.step()) communicators[s.int64(0)] = {s.text(1), optInt(s, 2), s.text(3)};
    return s.error();
}

/// Object id -> its name's string id and its class (from the name and the store's kind).
template <class ObjectMap>
Status readObjects(sqlite3* db, const std::vector<std::string>& strings, ObjectMap& objects) {
    schema::Statement s(db, "SELECT id, name_id, kind FROM object");
    while (s.step()) {
        int64_t nameId = s.int64(1);
        std::string_view name = nameId >= 0 && size_t(nameId) < strings.size() ? std::string_view(strings[size_t(nameId)])
                                                                            : std::string_view();
        objects[s.int64(0)] = {nameId, classifyFile(name, s.text(2))};
    }
    return s.error();
}
} // namespace

const char* eventClassName(EventClass c) {
    switch (c) {
    case EventClass::Compute: return "compute";
    case EventClass::Communication: return "communication";
    case EventClass::Io: return "io";
    case EventClass::Memory: return "memory";
    case EventClass::Sync: return "sync";
    case EventClass::Annotation: return "annotation";
    case EventClass::Setup: return "setup";
    }
    return "annotation";
}

Result<TraceIndex> TraceIndex::load(const Trace& trace) {
    TraceIndex ix;
    sqlite3* db = detail::db(trace);
    HPCPROF_RETURN_IF_ERROR(readProcesses(db, ix.m_processes));
    HPCPROF_RETURN_IF_ERROR(readTracks(db, ix.m_tracks));
    HPCPROF_RETURN_IF_ERROR(readStrings(db, ix.m_strings));
    HPCPROF_RETURN_IF_ERROR(readCategories(db, ix.m_categories, ix.m_classById));
    HPCPROF_RETURN_IF_ERROR(readCommunicators(db, ix.m_communicators));
    HPCPROF_RETURN_IF_ERROR(readObjects(db, ix.m_strings, ix.m_objects));
    return ix;
}

std::vector<const TrackInfo*> TraceIndex::tracksOf(int64_t processId) const {
    std::vector<const TrackInfo*> out;
    for (const auto& t : m_tracks)
        if (t.processId == processId) out.push_back(&t);
    return out;
}

const std::string& TraceIndex::string(int64_t id) const {
    static const std::string kUnknown = "(unknown)";
    if (id < 0 || size_t(id) >= m_strings.size()) return kUnknown;
    return m_strings[size_t(id)];
}

const std::string& TraceIndex::categoryName(int64_t categoryId) const {
    static const std::string kUnknown = "unknown";
    auto it = m_categories.find(categoryId);
    return it == m_categories.end() ? kUnknown : it->second.first;
}

EventClass TraceIndex::categoryClass(int64_t categoryId) const {
    auto it = m_categories.find(categoryId);
    return it == m_categories.end() ? EventClass::Annotation : it->second.second;
}

const CommunicatorInfo* TraceIndex::communicator(int64_t id) const {
    auto it = m_communicators.find(id);
    return it == m_communicators.end() ? nullptr : &it->second;
}

const std::string& TraceIndex::objectName(int64_t objectId) const {
    auto it = m_objects.find(objectId);
    return string(it == m_objects.end() ? -1 : it->second.nameId);
}

FileClass TraceIndex::objectClass(int64_t objectId) const {
    auto it = m_objects.find(objectId);
    return it == m_objects.end() ? FileClass::Unknown : it->second.fileClass;
}

int64_t TraceIndex::eventCount() const {
    int64_t n = 0;
    for (const auto& t : m_tracks) n += t.eventCount;
    return n;
}

namespace detail {

schema::Statement prepareTrackScan(const Trace& trace, const TrackInfo& track, int64_t from) {
    // Only the columns the analyses read; absent values are mapped in SQL (-1, count 1) so a row
    // costs one column call per value instead of a type test and a read.
    static constexpr const char* kColumns =
        "SELECT id, ts, dur, category_id, name_id, depth, IFNULL(bytes, -1), IFNULL(object_id, -1),"
        " IFNULL(peer, -1), IFNULL(communicator_id, -1), IFNULL(seq, -1), IFNULL(count, 1),"
        " IFNULL(correlation_id, -1) FROM event ";
    const bool byRange = track.firstEventId && track.lastEventId;
    std::string sql = kColumns;
    // The id range bounds the track (rowid range scan); the track_id test guards against a
    // trace whose ranges overlap.
    sql += byRange ? "WHERE id BETWEEN ? AND ? AND track_id = ?" : "WHERE track_id = ? ORDER BY ts";
    schema::Statement s(detail::db(trace), sql);
    if (!s.valid()) return s;
    if (byRange) {
        s.bind(1, from);
        s.bind(2, *track.lastEventId);
        s.bind(3, track.id);
    } else {
        s.bind(1, track.id);
    }
    return s;
}

void readEventRow(const schema::Statement& s, EventRecord& e) {
    sqlite3_stmt* st = s.get();
    e.id = sqlite3_column_int64(st, 0);
    e.ts = sqlite3_column_int64(st, 1);
    e.dur = sqlite3_column_int64(st, 2);
    e.categoryId = int32_t(sqlite3_column_int64(st, 3));
    e.nameId = sqlite3_column_int64(st, 4);
    e.depth = int32_t(sqlite3_column_int64(st, 5));
}

void readEventDetails(const schema::Statement& s, EventRecord& e) {
    sqlite3_stmt* st = s.get();
    e.bytes = sqlite3_column_int64(st, 6);
    e.objectId = sqlite3_column_int64(st, 7);
    e.peer = int32_t(sqlite3_column_int64(st, 8));
    e.communicatorId = sqlite3_column_int64(st, 9);
    e.seq = sqlite3_column_int64(st, 10);
    int64_t c = sqlite3_column_int64(st, 11);
    e.count = c < 1 ? 1 : int32_t(std::min<int64_t>(c, INT32_MAX));
    e.correlationId = sqlite3_column_int64(st, 12);
}

void clearEventDetails(EventRecord& e) {
    e.bytes = e.objectId = e.communicatorId = e.seq = e.correlationId = -1;
    e.peer = -1;
    e.count = 1;
}

} // namespace detail

} // namespace hpcprof::analyzer
