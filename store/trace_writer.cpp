// SPDX-License-Identifier: MIT
#include "hpcprof/store/trace_writer.hpp"

#include "event_pages.hpp"
#include "table_statistics.hpp"
#include "hpcprof/schema/object_kind.hpp"
#include "hpcprof/schema/tables.hpp"

#include <fmt/format.h>

namespace hpcprof::store {

namespace {
template <typename T> void bindOptional(schema::Statement& s, int i, const std::optional<T>& v) {
    if (v)
        s.bind(i, *v);
    else
        s.bindNull(i);
}

/// A NULL-able column of a row type: its name and where the row keeps it.
template <typename Row> struct OptionalColumn {
    std::string_view name;
    std::optional<int64_t> Row::*field;
};

// The NULL-able columns of `event` and `event_detail`, in DDL order; bit i of a batch's shape
// stands for entry i.
constexpr std::array<OptionalColumn<EventRow>, 8> kEventOptional = {{
    {"bytes", &EventRow::bytes},
    {"object_id", &EventRow::objectId},
    {"peer", &EventRow::peer},
    {"communicator_id", &EventRow::communicatorId},
    {"seq", &EventRow::seq},
    {"correlation_id", &EventRow::correlationId},
    {"count", &EventRow::count},
    {"offset", &EventRow::offset},
}};
// The offset is not one of them: it goes to event.offset (EventRow::offset).
constexpr std::array<OptionalColumn<EventDetail>, 3> kDetailOptional = {{
    {"errno", &EventDetail::errnoValue},
    {"fd", &EventDetail::fd},
    {"tag", &EventDetail::tag},
}};

/// The optional columns `row` sets, as shape bits.
template <typename Row, size_t N>
unsigned shapeOf(const Row& row, const std::array<OptionalColumn<Row>, N>& columns) {
    unsigned shape = 0;
    for (size_t c = 0; c < N; ++c) shape |= unsigned((row.*columns[c].field).has_value()) << c;
    return shape;
}

/// Binds the optional columns of `row` that `shape` names, from parameter `next` on.
template <typename Row, size_t N>
void bindShaped(schema::Statement& s, int& next, const Row& row,
                const std::array<OptionalColumn<Row>, N>& columns, unsigned shape) {
    for (size_t c = 0; c < N; ++c)
        if (shape & (1u << c)) bindOptional(s, next++, row.*columns[c].field);
}

// A multi-row INSERT for the columns a batch shape selects: `head` ("INSERT INTO t(fixed
// columns") gains ", name" and each `row` ("(fixed values") gains ",?" for every set bit i of
// `shape` (columns[i]), then `rows` copies of the row follow VALUES.
template <typename Row, size_t N>
std::string shapedBatchInsert(std::string head, std::string row,
                              const std::array<OptionalColumn<Row>, N>& columns, unsigned shape,
                              size_t rows) {
    for (size_t c = 0; c < N; ++c)
        if (shape & (1u << c)) {
            head += ", ";
            head += columns[c].name;
            row += ",?";
        }
    row += ")";
    head += ") VALUES ";
    for (size_t i = 0; i < rows; ++i) head += (i ? "," : "") + row;
    return head;
}
} // namespace

TraceWriter::TraceWriter() = default;
TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&&) noexcept = default;
TraceWriter::~TraceWriter() = default;

Result<TraceWriter> TraceWriter::create(const std::string& path, const TraceWriterOptions& options) {
    auto db = schema::createTrace(path);
    if (!db) return db.status();
    TraceWriter w;
    w.m_db = std::move(db.value());
    w.m_path = path;
    HPCPROF_RETURN_IF_ERROR(w.prepare());
    if (options.eventPages) {
        // The leaves are built for the trace's page size and reserved bytes (createTrace's).
        schema::Statement size(w.db(), "PRAGMA page_size");
        int reserved = -1;
        if (!size.step() ||
            sqlite3_file_control(w.db(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserved) != SQLITE_OK)
            return Status::error("cannot read the trace's page size");
        const auto pageSize = uint32_t(size.int64(0));
        auto pages = EventPages::create(std::filesystem::path(path).parent_path(), pageSize,
                                        pageSize - uint32_t(reserved));
        if (!pages) return pages.status();
        w.m_pages = std::move(pages.value());
    }
    return w;
}

Status TraceWriter::prepare() {
    sqlite3* d = m_db.get();
    HPCPROF_RETURN_IF_ERROR(schema::exec(d, "PRAGMA cache_size=-8192; BEGIN"));
    m_insString = schema::Statement(d, "INSERT INTO string(id, value) VALUES (?, ?)");
    m_insObject = schema::Statement(d, "INSERT INTO object(id, name_id, kind) VALUES (?, ?, ?)");
    m_insCommunicator =
        schema::Statement(d, "INSERT INTO communicator(id, key, size, kind) VALUES (?, ?, ?, ?)");
    m_insProcess = schema::Statement(
        d, "INSERT INTO process(id, rank, world_size, local_rank, rank_source, host, pid, ppid,"
           " parent_process_id, command, exe, start_ts, end_ts, end_state, exit_code, clock_method,"
            " clock_offset_ns, clock_drift_ppb, clock_uncertainty_ns, raw_dir, cwd)"
           " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    m_insThread =
        schema::Statement(d, "INSERT INTO thread(id, process_id, tid, name, recording_stopped_ts,"
                             " stop_reason, records_dropped) VALUES (?, ?, ?, ?, ?, ?, ?)");
    m_insTrack = schema::Statement(
        d, "INSERT INTO track(id, process_id, thread_id, kind, name, device, stream)"
           " VALUES (?, ?, ?, ?, ?, ?, ?)");
    // Ids are not bound: SQLite appends max(rowid) + 1, which equals the writer's own counter
    // (the table only grows) and skips the b-tree seek an explicit rowid costs.
    const std::string eventInsert = "INSERT INTO event(track_id, ts, dur, category_id, name_id,"
                                    " depth, bytes, object_id, peer, communicator_id, seq,"
                                    " correlation_id, count, offset) VALUES ";
    const std::string oneRow = "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    m_insEvent = schema::Statement(d, eventInsert + oneRow);
    const std::string detailInsert = "INSERT INTO event_detail(event_id, errno, fd, tag) VALUES ";
    m_insDetail = schema::Statement(d, detailInsert + "(?, ?, ?, ?)");
    m_insArg = schema::Statement(d, "INSERT OR REPLACE INTO event_arg(event_id, key, value) VALUES (?, ?, ?)");
    m_insCompletion = schema::Statement(
        d, "INSERT OR IGNORE INTO mpi_completion(event_id, request, post_event_id, kind, peer, tag,"
           " bytes) VALUES (?, ?, ?, ?, ?, ?, ?)");
    m_finishTrack = schema::Statement(
        d, "UPDATE track SET first_event_id = ?, last_event_id = ?, event_count = ? WHERE id = ?");
    m_insMeta =
        schema::Statement(d, "INSERT OR REPLACE INTO metadata(key, value) VALUES (?, ?)");
    for (auto* s : {&m_insString, &m_insObject, &m_insCommunicator, &m_insProcess,
                    &m_insThread, &m_insTrack, &m_insEvent, &m_insDetail, &m_insArg,
                    &m_finishTrack, &m_insMeta, &m_insCompletion})
        if (!s->valid()) return s->error();
    return {};
}

int64_t TraceWriter::internString(std::string_view text) {
    auto [it, inserted] = m_strings.try_emplace(std::string(text), m_nextString);
    if (!inserted) return it->second;
    if (m_stringText.size() <= size_t(m_nextString)) m_stringText.resize(size_t(m_nextString) + 1);
    m_stringText[size_t(m_nextString)] = &it->first;
    m_insString.bind(1, m_nextString);
    m_insString.bind(2, text);
    check(m_insString.run());
    return m_nextString++;
}

int64_t TraceWriter::internObject(int64_t nameStringId, std::string_view name) {
    auto [it, inserted] = m_objects.try_emplace(nameStringId, m_nextObject);
    if (!inserted) return it->second;
    if (m_objectName.size() <= size_t(m_nextObject)) m_objectName.resize(size_t(m_nextObject) + 1);
    m_objectName[size_t(m_nextObject)] = nameStringId;
    m_insObject.bind(1, m_nextObject);
    m_insObject.bind(2, nameStringId);
    m_insObject.bind(3, schema::objectKindOf(name));
    check(m_insObject.run());
    return m_nextObject++;
}

int64_t TraceWriter::internCommunicator(std::string_view key, std::optional<int64_t> size,
                                        std::string_view kind) {
    // Consecutive communication calls mostly name one communicator: compared, not hashed.
    CommunicatorRow* row = m_lastCommunicator && *m_lastCommunicatorKey == key ? m_lastCommunicator : nullptr;
    if (!row) {
        auto [it, inserted] =
            m_communicators.try_emplace(std::string(key), CommunicatorRow{m_nextCommunicator, false});
        m_lastCommunicatorKey = &it->first; // map nodes stay where they are
        m_lastCommunicator = &it->second;
        if (inserted) {
            it->second.hasSize = size.has_value();
            m_insCommunicator.bind(1, m_nextCommunicator);
            m_insCommunicator.bind(2, key);
            bindOptional(m_insCommunicator, 3, size);
            m_insCommunicator.bind(4, kind);
            check(m_insCommunicator.run());
            return m_nextCommunicator++;
        }
        row = &it->second;
    }
    if (size && !row->hasSize) {
        if (!m_setCommunicatorSize.valid())
            m_setCommunicatorSize = schema::Statement(db(), "UPDATE communicator SET size = ? WHERE id = ?");
        m_setCommunicatorSize.bind(1, *size);
        m_setCommunicatorSize.bind(2, row->id);
        check(m_setCommunicatorSize.run());
        row->hasSize = true;
    }
    return row->id;
}

Status TraceWriter::insertProcess(const ProcessRow& p) {
    auto& s = m_insProcess;
    s.bind(1, p.id);
    bindOptional(s, 2, p.rank);
    bindOptional(s, 3, p.worldSize);
    bindOptional(s, 4, p.localRank);
    s.bind(5, p.rankSource);
    s.bind(6, p.host);
    s.bind(7, p.pid);
    bindOptional(s, 8, p.ppid);
    bindOptional(s, 9, p.parentProcessId);
    s.bind(10, p.command);
    s.bind(11, p.exe);
    s.bind(12, p.startTs);
    bindOptional(s, 13, p.endTs);
    s.bind(14, p.endState);
    bindOptional(s, 15, p.exitCode);
    s.bind(16, p.clockMethod);
    s.bind(17, p.clockOffsetNs);
    s.bind(18, p.clockDriftPpb);
    bindOptional(s, 19, p.clockUncertaintyNs);
    s.bind(20, p.rawDir);
    bindOptional(s, 21, p.cwd);
    Status st = s.run();
    check(st);
    return st;
}

int64_t TraceWriter::insertThread(int64_t processId, int64_t tid, std::string_view name,
                                  const ThreadRecording& recording) {
    m_insThread.bind(1, m_nextThread);
    m_insThread.bind(2, processId);
    m_insThread.bind(3, tid);
    if (name.empty())
        m_insThread.bindNull(4);
    else
        m_insThread.bind(4, name);
    bindOptional(m_insThread, 5, recording.stoppedTs);
    if (recording.stopReason.empty())
        m_insThread.bindNull(6);
    else
        m_insThread.bind(6, recording.stopReason);
    m_insThread.bind(7, recording.recordsDropped);
    check(m_insThread.run());
    return m_nextThread++;
}

int64_t TraceWriter::insertTrack(int64_t processId, std::optional<int64_t> threadId,
                                 std::string_view kind, std::string_view name,
                                 std::optional<int64_t> device, std::optional<int64_t> stream) {
    auto& s = m_insTrack;
    s.bind(1, m_nextTrack);
    s.bind(2, processId);
    bindOptional(s, 3, threadId);
    s.bind(4, kind);
    s.bind(5, name);
    bindOptional(s, 6, device);
    bindOptional(s, 7, stream);
    check(s.run());
    m_io.addTrack(m_nextTrack, processId);
    return m_nextTrack++;
}

int64_t TraceWriter::insertEvent(const EventRow& e, const EventDetail& d) {
    int64_t id = m_nextEvent++;
    if (d.any()) ++m_detailRows;
    if (e.categoryId >= 0 && size_t(e.categoryId) < m_categories.size())
        m_categories.set(size_t(e.categoryId));
    else
        m_categoryOutOfRange = true;
    m_io.add(e.trackId, e.categoryId, e.nameId, e.objectId.value_or(0), e.dur, e.bytes.value_or(0),
             e.depth == 0);
    if (m_pages) { // packed into pages as it comes (the same row the INSERT below makes)
        check(m_pages->addEvent(id, e, d.offset ? d.offset : e.offset));
        if (d.any()) check(m_pages->addDetail(id, d));
        return id;
    }
    EventRow& row = m_pendingEvents.emplace_back(e);
    if (d.offset) row.offset = d.offset;
    m_pendingShape |= shapeOf(row, kEventOptional) | (e.depth != 0 ? kShapeDepthPerRow : 0u);
    if (d.any()) m_pendingDetails.emplace_back(id, d);
    if (m_pendingEvents.size() == kEventBatch) flushEvents();
    return id;
}

void TraceWriter::bindEvent(schema::Statement& s, const EventRow& e) {
    s.bind(1, e.trackId);
    s.bind(2, e.ts);
    s.bind(3, e.dur);
    s.bind(4, e.categoryId);
    s.bind(5, e.nameId);
    s.bind(6, e.depth);
    int next = 7;
    bindShaped(s, next, e, kEventOptional, (1u << kEventOptional.size()) - 1);
}

schema::Statement& TraceWriter::eventBatchStatement(unsigned shape) {
    schema::Statement& s = m_insEventBatch[shape];
    if (s.valid()) return s;
    static_assert(kEventOptional.size() == kOptionalEventColumns);
    // Every parameter is numbered: ?1, ?2 and ?3 are the batch's one track, category and name
    // (bound once, not per row) unless rows differ; the per-row values are ?4 on, in the order
    // flushEvents binds them. A depth of 0 for all rows is a literal.
    std::string sql = "INSERT INTO event(track_id, ts, dur, category_id, name_id, depth";
    for (size_t c = 0; c < kEventOptional.size(); ++c)
        if (shape & (1u << c)) sql += fmt::format(", {}", kEventOptional[c].name);
    sql += ") VALUES ";
    int next = kFirstPerRowParameter;
    auto param = [&](unsigned perRowBit, int shared) {
        return fmt::format("?{}", shape & perRowBit ? next++ : shared);
    };
    for (size_t i = 0; i < kEventBatch; ++i) {
        sql += i ? ",(" : "(";
        sql += param(kShapeTrackPerRow, 1);
        sql += fmt::format(",?{},?{},", next, next + 1);
        next += 2;
        sql += param(kShapeCategoryPerRow, 2); // two statements: numbered in this order
        sql += ",";
        sql += param(kShapeNamePerRow, 3);
        sql += shape & kShapeDepthPerRow ? fmt::format(",?{}", next++) : std::string(",0");
        for (size_t c = 0; c < kEventOptional.size(); ++c)
            if (shape & (1u << c)) sql += fmt::format(",?{}", next++);
        sql += ")";
    }
    s = schema::Statement(db(), sql);
    check(s.error());
    return s;
}

schema::Statement& TraceWriter::detailBatchStatement(unsigned shape) {
    schema::Statement& s = m_insDetailBatch[shape];
    if (s.valid()) return s;
    s = schema::Statement(db(), shapedBatchInsert("INSERT INTO event_detail(event_id", "(?",
                                                  kDetailOptional, shape, kDetailBatch));
    check(s.error());
    return s;
}

unsigned TraceWriter::pendingBatchShape() const {
    // Only the optional columns some row of the batch sets are named (the rest stay NULL), and
    // values shared by the whole batch are bound once: fewer binds and copies per row.
    unsigned shape = m_pendingShape;
    const EventRow& head = m_pendingEvents.front();
    for (const EventRow& e : m_pendingEvents) {
        if (e.trackId != head.trackId) shape |= kShapeTrackPerRow;
        if (e.categoryId != head.categoryId) shape |= kShapeCategoryPerRow;
        if (e.nameId != head.nameId) shape |= kShapeNamePerRow;
    }
    return shape;
}

void TraceWriter::bindPendingBatch(schema::Statement& s, unsigned shape) {
    const bool trackPerRow = shape & kShapeTrackPerRow, depthPerRow = shape & kShapeDepthPerRow,
               categoryPerRow = shape & kShapeCategoryPerRow, namePerRow = shape & kShapeNamePerRow;
    const EventRow& head = m_pendingEvents.front();
    if (!trackPerRow) s.bind(1, head.trackId);
    if (!categoryPerRow) s.bind(2, head.categoryId);
    if (!namePerRow) s.bind(3, head.nameId);
    int next = kFirstPerRowParameter; // in the order eventBatchStatement numbers them
    for (const EventRow& e : m_pendingEvents) {
        if (trackPerRow) s.bind(next++, e.trackId);
        s.bind(next++, e.ts);
        s.bind(next++, e.dur);
        if (categoryPerRow) s.bind(next++, e.categoryId);
        if (namePerRow) s.bind(next++, e.nameId);
        if (depthPerRow) s.bind(next++, e.depth);
        bindShaped(s, next, e, kEventOptional, shape);
    }
}

void TraceWriter::flushEvents(bool final) {
    if (m_pendingEvents.size() == kEventBatch) {
        unsigned shape = pendingBatchShape();
        schema::Statement& s = eventBatchStatement(shape);
        bindPendingBatch(s, shape);
        check(s.run());
    } else {
        for (const auto& e : m_pendingEvents) {
            bindEvent(m_insEvent, e);
            check(m_insEvent.run());
        }
    }
    if (!m_pendingEvents.empty() && sqlite3_last_insert_rowid(db()) != m_nextEvent - 1)
        check(Status::error("event ids out of step (was the event table written elsewhere?)"));
    m_pendingEvents.clear();
    m_pendingShape = 0;
    flushDetails(final);
    if (final) {
        flushArgs();
        flushCompletions();
    }
}

void TraceWriter::flushDetails(bool final) {
    // Details go in batches too when there are enough of them (failed calls, message tags).
    size_t i = 0;
    if (!final && m_pendingDetails.size() < kDetailBatch) return;
    for (; i + kDetailBatch <= m_pendingDetails.size(); i += kDetailBatch) {
        // As for events: only the columns some detail of the batch sets are named.
        unsigned shape = 0;
        for (size_t k = 0; k < kDetailBatch; ++k)
            shape |= shapeOf(m_pendingDetails[i + k].second, kDetailOptional);
        schema::Statement& t = detailBatchStatement(shape);
        int next = 1;
        for (size_t k = 0; k < kDetailBatch; ++k) {
            const auto& [id, x] = m_pendingDetails[i + k];
            t.bind(next++, id);
            bindShaped(t, next, x, kDetailOptional, shape);
        }
        check(t.run());
    }
    if (final) {
        for (; i < m_pendingDetails.size(); ++i) {
            m_insDetail.bind(1, m_pendingDetails[i].first);
            int next = 2;
            bindShaped(m_insDetail, next, m_pendingDetails[i].second, kDetailOptional,
                       (1u << kDetailOptional.size()) - 1);
            check(m_insDetail.run());
        }
    }
    m_pendingDetails.erase(m_pendingDetails.begin(), m_pendingDetails.begin() + long(i));
}

TraceWriter::PendingArg& TraceWriter::nextArg(int64_t eventId, std::string_view key) {
    if (m_pendingArgs.size() < kArgBatch) m_pendingArgs.resize(kArgBatch);
    PendingArg& a = m_pendingArgs[m_argCount++];
    a.eventId = eventId;
    a.key.assign(key);
    return a;
}

void TraceWriter::insertEventArg(int64_t eventId, std::string_view key, int64_t value) {
    PendingArg& a = nextArg(eventId, key);
    a.kind = PendingArg::Kind::Int;
    a.i = value;
    if (m_argCount == kArgBatch) flushArgs();
}

void TraceWriter::insertEventArg(int64_t eventId, std::string_view key, double value) {
    PendingArg& a = nextArg(eventId, key);
    a.kind = PendingArg::Kind::Real;
    a.d = value;
    if (m_argCount == kArgBatch) flushArgs();
}

void TraceWriter::insertEventArg(int64_t eventId, std::string_view key, std::string_view value) {
    PendingArg& a = nextArg(eventId, key);
    a.kind = PendingArg::Kind::Text;
    a.text.assign(value);
    if (m_argCount == kArgBatch) flushArgs();
}

void TraceWriter::flushArgs() {
    auto bindArg = [](schema::Statement& s, int base, const PendingArg& a) {
        s.bind(base + 1, a.eventId);
        s.bind(base + 2, std::string_view(a.key));
        switch (a.kind) {
        case PendingArg::Kind::Int: s.bind(base + 3, a.i); break;
        case PendingArg::Kind::Real: s.bind(base + 3, a.d); break;
        case PendingArg::Kind::Text: s.bind(base + 3, std::string_view(a.text)); break;
        }
    };
    if (m_argCount == kArgBatch) {
        if (!m_insArgBatch.valid()) {
            // Rows of one statement are applied in order, so OR REPLACE keeps the last value
            // for a repeated key, as one statement per row did.
            std::string sql = "INSERT OR REPLACE INTO event_arg(event_id, key, value) VALUES ";
            for (size_t i = 0; i < kArgBatch; ++i) sql += i ? ",(?,?,?)" : "(?,?,?)";
            m_insArgBatch = schema::Statement(db(), sql);
            check(m_insArgBatch.error());
        }
        for (size_t i = 0; i < kArgBatch; ++i) bindArg(m_insArgBatch, int(3 * i), m_pendingArgs[i]);
        check(m_insArgBatch.run());
    } else {
        for (size_t i = 0; i < m_argCount; ++i) {
            bindArg(m_insArg, 0, m_pendingArgs[i]);
            check(m_insArg.run());
        }
    }
    m_argCount = 0;
}

void TraceWriter::insertMpiCompletion(const MpiCompletionRow& c) {
    m_pendingCompletions.push_back(c);
    if (m_pendingCompletions.size() == kCompletionBatch) flushCompletions();
}

void TraceWriter::flushCompletions() {
    // A full batch in one multi-row INSERT OR IGNORE (rows applied in order: the first of a
    // repeated (event, request) still wins), fewer one by one.
    const bool batch = m_pendingCompletions.size() == kCompletionBatch;
    if (batch && !m_insCompletionBatch.valid()) {
        std::string sql = "INSERT OR IGNORE INTO mpi_completion(event_id, request, post_event_id, kind, peer,"
                          " tag, bytes) VALUES ";
        for (size_t i = 0; i < kCompletionBatch; ++i) sql += i ? ",(?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?)";
        m_insCompletionBatch = schema::Statement(db(), sql);
        check(m_insCompletionBatch.error());
    }
    schema::Statement& s = batch ? m_insCompletionBatch : m_insCompletion;
    int next = 1;
    for (const MpiCompletionRow& c : m_pendingCompletions) {
        s.bind(next++, c.eventId);
        s.bind(next++, c.request);
        bindOptional(s, next++, c.postEventId);
        s.bind(next++, std::string_view(c.isRecv ? "recv" : "send"));
        bindOptional(s, next++, c.peer);
        bindOptional(s, next++, c.tag);
        bindOptional(s, next++, c.bytes);
        if (!batch) {
            check(s.run());
            next = 1;
        }
    }
    if (batch) check(s.run());
    m_pendingCompletions.clear();
}

Status TraceWriter::finishTrack(int64_t trackId, int64_t firstEventId, int64_t lastEventId,
                                int64_t count) {
    flushEvents(true);
    auto& s = m_finishTrack;
    if (count > 0) {
        s.bind(1, firstEventId);
        s.bind(2, lastEventId);
    } else {
        s.bindNull(1);
        s.bindNull(2);
    }
    s.bind(3, count);
    s.bind(4, trackId);
    Status st = s.run();
    check(st);
    return st;
}

Status TraceWriter::setMetadata(std::string_view key, std::string_view value) {
    m_insMeta.bind(1, key);
    m_insMeta.bind(2, value);
    Status st = m_insMeta.run();
    check(st);
    return st;
}

Status TraceWriter::writeStats(const StatCounts& totals,
                               const std::vector<std::pair<int64_t, StatCounts>>& perProcess,
                               const StatDetails& details) {
    schema::Statement ins(db(), "INSERT INTO stats(id, name, severity, source, value, description)"
                                " VALUES (?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < totals.size(); ++i) {
        const auto& info = schema::kStats[i];
        ins.bind(1, int64_t(i + 1));
        ins.bind(2, info.name);
        ins.bind(3, schema::severityName(info.severity));
        ins.bind(4, info.source);
        ins.bind(5, totals[i]);
        std::string description(info.description);
        if (!details[i].empty()) description += "; " + details[i];
        ins.bind(6, description);
        HPCPROF_RETURN_IF_ERROR(ins.run());
    }
    schema::Statement per(db(),
                          "INSERT INTO stats_by_process(stats_id, process_id, value) VALUES (?,?,?)");
    for (const auto& [processId, counts] : perProcess)
        for (size_t i = 0; i < counts.size(); ++i)
            if (counts[i] != 0) {
                per.bind(1, int64_t(i + 1));
                per.bind(2, processId);
                per.bind(3, counts[i]);
                HPCPROF_RETURN_IF_ERROR(per.run());
            }
    return {};
}

std::vector<schema::IoGroup> TraceWriter::ioGroups() const {
    auto text = [this](int64_t id) -> std::string_view {
        return id > 0 && size_t(id) < m_stringText.size() && m_stringText[size_t(id)]
                   ? std::string_view(*m_stringText[size_t(id)])
                   : std::string_view();
    };
    auto objectName = [this](int64_t id) -> int64_t {
        return id > 0 && size_t(id) < m_objectName.size() ? m_objectName[size_t(id)] : 0;
    };
    return m_io.groups(text, objectName);
}

void TraceWriter::finalizeStatements() {
    for (auto* st : {&m_insString, &m_insObject, &m_insCommunicator, &m_setCommunicatorSize, &m_insProcess,
                     &m_insThread, &m_insTrack, &m_insEvent, &m_insDetail, &m_insArg, &m_insArgBatch,
                     &m_finishTrack, &m_insMeta, &m_insCompletion, &m_insCompletionBatch})
        *st = {};
    for (auto& st : m_insEventBatch) st = {};
    for (auto& st : m_insDetailBatch) st = {};
}

Status TraceWriter::reopen() {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(m_path.c_str(), &raw,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX |
                                       SQLITE_OPEN_NOFOLLOW,
                                   nullptr);
    m_db.reset(raw);
    if (rc != SQLITE_OK) return Status::error("cannot reopen trace " + m_path);
    // As schema::createTrace set them: a private bulk load, no journal, no fsync.
    HPCPROF_RETURN_IF_ERROR(schema::exec(db(), "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                                               " PRAGMA locking_mode=EXCLUSIVE;"));
    return prepare();
}

Status TraceWriter::replayEvents(const EventPages& pages, const bool* failed) {
    for (int t = 0; t < EventPages::TableCount_; ++t) {
        if (!failed[t]) continue;
        const size_t n = EventPages::kColumns[t];
        std::string sql = fmt::format("INSERT INTO {} VALUES (?", EventPages::kTableNames[t]);
        for (size_t i = 1; i < n; ++i) sql += ",?";
        schema::Statement ins(db(), sql + ")");
        if (!ins.valid()) return ins.error();
        HPCPROF_RETURN_IF_ERROR(pages.replay(EventPages::Table(t), [&](int64_t rowid, const std::optional<int64_t>* c,
                                                                       size_t columns) {
            ins.bind(1, rowid);
            for (size_t i = 1; i < n; ++i) bindOptional(ins, int(i + 1), i < columns ? c[i] : std::nullopt);
            return ins.run();
        }));
    }
    return {};
}

Status TraceWriter::settleEvents() {
    if (!m_pages) return {};
    flushEvents(true);
    HPCPROF_RETURN_IF_ERROR(m_error);
    std::unique_ptr<EventPages> pages = std::move(m_pages);
    HPCPROF_RETURN_IF_ERROR(pages->flush());
    uint32_t roots[EventPages::TableCount_];
    for (int t = 0; t < EventPages::TableCount_; ++t) {
        schema::Statement root(db(), fmt::format("SELECT rootpage FROM sqlite_schema WHERE type = 'table'"
                                                 " AND name = '{}'", EventPages::kTableNames[t]));
        if (!root.step()) return Status::error("the trace has no " + std::string(EventPages::kTableNames[t]));
        roots[t] = uint32_t(root.int64(0));
    }
    finalizeStatements();
    HPCPROF_RETURN_IF_ERROR(schema::exec(db(), "COMMIT"));
    m_db.reset();
    bool failed[EventPages::TableCount_] = {};
    std::string why;
    HPCPROF_RETURN_IF_ERROR(pages->write(m_path, roots, failed, why));
    HPCPROF_RETURN_IF_ERROR(reopen());
    // A table the pages could not go to (a file this writer does not handle): its rows by SQL.
    return replayEvents(*pages, failed);
}

Status TraceWriter::finish() {
    HPCPROF_RETURN_IF_ERROR(settleEvents());
    flushEvents(true);
    if (!m_categoryOutOfRange)
        HPCPROF_RETURN_IF_ERROR(setMetadata(schema::kEventCategoriesKey, schema::eventCategoriesText(m_categories)));
    if (!m_error.ok()) return m_error;
    finalizeStatements(); // before the handle closes
    HPCPROF_RETURN_IF_ERROR(schema::exec(m_db.get(), "COMMIT"));
    // Secondary indexes after the load (events need none: each track is a contiguous id range).
    HPCPROF_RETURN_IF_ERROR(schema::exec(
        m_db.get(), "CREATE INDEX track_process ON track(process_id);"
                    "CREATE UNIQUE INDEX string_value ON string(value);"
                    "CREATE INDEX counter_track_ts ON counter(counter_track_id, ts);"));
    // Only this writer adds event and event_detail rows, and neither has an index: their
    // statistics are the rows it wrote (ANALYZE would read every event page again).
    HPCPROF_RETURN_IF_ERROR(writeStatistics(m_db.get(), {{"event", m_nextEvent - 1}, {"event_detail", m_detailRows}}));
    m_db.reset();
    return {};
}

} // namespace hpcprof::store
