// SPDX-License-Identifier: MIT
// Bulk writer for a new trace file: prepared statements, interning of strings and objects, and
// one large transaction. The only code that writes traces (the store step and importers use it).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/event_categories.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/store/io_totals.hpp"

namespace hpcprof::store {

/// Row of the process table.
struct ProcessRow {
    int64_t id = 0;
    std::optional<int64_t> rank, worldSize, localRank;
    std::string rankSource, host, command, exe, endState, clockMethod, rawDir;
    int64_t pid = 0;
    std::optional<int64_t> ppid, parentProcessId, endTs, exitCode, clockUncertaintyNs;
    int64_t startTs = 0, clockOffsetNs = 0, clockDriftPpb = 0;
    std::optional<std::string> cwd; ///< working directory the process started in, if recorded
};

/// How a thread's recording ended (thread table): when it stopped and why, and what it could not
/// record. Empty = recorded to its end, nothing lost.
struct ThreadRecording {
    std::optional<int64_t> stoppedTs;
    std::string stopReason;     ///< disk_full | quota | file_error | buffer_limit
    int64_t recordsDropped = 0;
};

/// Row of the event table (NULL-able columns use std::optional).
struct EventRow {
    int64_t trackId = 0;
    int64_t ts = 0;
    int64_t dur = 0;
    int64_t categoryId = 0;
    int64_t nameId = 0;
    int64_t depth = 0;
    std::optional<int64_t> bytes, objectId, peer, communicatorId, seq, correlationId, count;
    /// event.offset; insertEvent takes it from EventDetail::offset, where callers put it.
    std::optional<int64_t> offset;
};

/// Optional per-event facts. The offset of a positioned call goes to event.offset (common: one
/// row per such call); the rest to an event_detail row, written only if any of them is set.
struct EventDetail {
    std::optional<int64_t> offset, errnoValue, fd, tag;
    /// Whether the event needs an event_detail row.
    bool any() const { return errnoValue || fd || tag; }
};

/// Row of mpi_completion: one request an MPI wait or test completed.
struct MpiCompletionRow {
    int64_t eventId = 0; ///< the completing wait/test
    int64_t request = 0;
    std::optional<int64_t> postEventId, peer, tag, bytes;
    bool isRecv = false;
};

/// Data-quality counters for one process or the whole trace.
using StatCounts = std::array<int64_t, size_t(schema::Stat::Count_)>;
/// Per stat, what its count is made of ("mtia_insight 12, overhead 3"), appended to the stat's
/// description in the trace; empty for most.
using StatDetails = std::array<std::string, size_t(schema::Stat::Count_)>;

class EventPages;

/// How a TraceWriter writes.
struct TraceWriterOptions {
    /// `event` and `event_detail` rows packed into SQLite's pages directly (store/event_pages.hpp)
    /// instead of INSERTs: the same rows, at a fraction of the cost. They reach the tables only
    /// at settleEvents() or finish(): no SQL may read those tables before (the store step; other
    /// writers keep the default).
    bool eventPages = false;
};

class TraceWriter {
public:
    /// Events per multi-row INSERT: amortises statement start and halt over many rows (512 was
    /// faster than 128 and 2048 in store_bench).
    static constexpr size_t kEventBatch = 512;

    /// Creates the trace at `path` (must not exist) and opens the load transaction.
    static Result<TraceWriter> create(const std::string& path, const TraceWriterOptions& options = {});

    TraceWriter(TraceWriter&&) noexcept;
    TraceWriter& operator=(TraceWriter&&) noexcept;
    ~TraceWriter();

    /// The id of `text` in the string table, inserting it once.
    int64_t internString(std::string_view text);
    /// The object row for a path/name string id; kind is classified from the name.
    int64_t internObject(int64_t nameStringId, std::string_view name);
    /// The communicator row for `key`, inserting it once (its size is filled in when a later
    /// call knows it).
    int64_t internCommunicator(std::string_view key, std::optional<int64_t> size,
                               std::string_view kind);

    Status insertProcess(const ProcessRow& p);
    int64_t insertThread(int64_t processId, int64_t tid, std::string_view name,
                         const ThreadRecording& recording = {});
    /// Inserts a track; first/last event ids and the count are filled by finishTrack().
    int64_t insertTrack(int64_t processId, std::optional<int64_t> threadId, std::string_view kind,
                        std::string_view name, std::optional<int64_t> device,
                        std::optional<int64_t> stream);
    /// Appends an event and returns its id; events of one track must be appended
    /// consecutively, sorted by ts. Rows are buffered and written in multi-row batches.
    int64_t insertEvent(const EventRow& e, const EventDetail& d = {});
    /// Adds a free-form attribute to an event (event_arg table). Rows are buffered and written
    /// in multi-row batches with the events (a later value for the same key still wins).
    void insertEventArg(int64_t eventId, std::string_view key, int64_t value);
    void insertEventArg(int64_t eventId, std::string_view key, double value);
    void insertEventArg(int64_t eventId, std::string_view key, std::string_view value);
    /// event_arg rows of (key, integer-or-text) pairs, as the families collect them.
    template <typename Key, typename Value>
    void insertEventArgs(int64_t eventId, const std::vector<std::pair<Key, Value>>& args) {
        for (const auto& [key, value] : args) {
            if (const auto* i = std::get_if<int64_t>(&value))
                insertEventArg(eventId, key, *i);
            else
                insertEventArg(eventId, key, std::string_view(std::get<std::string>(value)));
        }
    }
    /// Adds a row to mpi_completion. Rows are buffered and written in multi-row batches with the
    /// events (the first row of a repeated (event, request) still wins).
    void insertMpiCompletion(const MpiCompletionRow& c);
    Status finishTrack(int64_t trackId, int64_t firstEventId, int64_t lastEventId, int64_t count);
    Status setMetadata(std::string_view key, std::string_view value);
    /// Writes the stats table (all known stats) and the per-process break-down.
    Status writeStats(const StatCounts& totals,
                      const std::vector<std::pair<int64_t, StatCounts>>& perProcess,
                      const StatDetails& details = {});

    /// The calls, time and bytes of the I/O events written so far, per process, function and
    /// file (what the run summary shows), summed as they were written.
    std::vector<schema::IoGroup> ioGroups() const;

    /// With eventPages: the events written so far put into their tables (the trace committed,
    /// closed, their pages appended, reopened in a new transaction), so that SQL can read and
    /// change them; later events go through SQL. Without: nothing to do.
    Status settleEvents();

    /// Commits, builds the indexes and closes the file.
    Status finish();

    /// First error met by any insert (inserts do not return Status to keep the loop tight).
    const Status& error() const { return m_error; }
    sqlite3* db() const { return m_db.get(); }

private:
    TraceWriter();
    /// The statements and the load transaction, on a created or reopened trace.
    Status prepare();
    /// Every statement of the writer finalized (before the handle closes).
    void finalizeStatements();
    /// The closed trace opened again for writing (after its event pages were appended).
    Status reopen();
    /// Rows of the tables whose pages could not be appended, through SQL.
    Status replayEvents(const EventPages& pages, const bool* failed);
    void check(const Status& s) {
        if (!s.ok() && m_error.ok()) m_error = s;
    }

    /// Writes buffered events; details only in full batches unless `final`.
    void flushEvents(bool final = false);
    /// Writes buffered event_detail rows: full batches, and the rest too when `final`.
    void flushDetails(bool final);
    void bindEvent(schema::Statement& s, const EventRow& e);
    /// The multi-row INSERT naming the mandatory columns plus the optional ones in `shape`.
    /// The shape of the full batch pending: its optional columns, and which of track, category,
    /// name and depth differ between its rows.
    unsigned pendingBatchShape() const;
    /// Binds the pending batch to `s`, a statement of eventBatchStatement(shape).
    void bindPendingBatch(schema::Statement& s, unsigned shape);
    schema::Statement& eventBatchStatement(unsigned shape);
    schema::Statement& detailBatchStatement(unsigned shape);

    /// event_detail rows per multi-row INSERT (failed calls, message tags, descriptor-only events).
    static constexpr size_t kDetailBatch = 128;
    /// event_arg rows per multi-row INSERT (imported memcpys have three, NCCL kernels five).
    static constexpr size_t kArgBatch = 128;
    /// A buffered event_arg row; slots are reused, so their strings keep their capacity.
    struct PendingArg {
        int64_t eventId = 0;
        std::string key;
        enum class Kind : unsigned char { Int, Real, Text } kind = Kind::Int;
        int64_t i = 0;
        double d = 0;
        std::string text;
    };
    PendingArg& nextArg(int64_t eventId, std::string_view key);
    /// mpi_completion rows per multi-row INSERT (an MPI loop has one or two per wait).
    static constexpr size_t kCompletionBatch = 128;
    std::vector<MpiCompletionRow> m_pendingCompletions;
    schema::Statement m_insCompletionBatch;
    /// Writes buffered mpi_completion rows: a full batch at once, fewer one by one.
    void flushCompletions();
    /// Writes buffered event_arg rows: a full batch at once, fewer one by one.
    void flushArgs();
    /// NULL-able event columns (bytes .. offset), one bit each in a batch's shape.
    static constexpr unsigned kOptionalEventColumns = 8;
    /// Further shape bits: rows of the batch differ in track_id / some row's depth is not 0.
    static constexpr unsigned kShapeTrackPerRow = 1u << kOptionalEventColumns;
    static constexpr unsigned kShapeDepthPerRow = 1u << (kOptionalEventColumns + 1);
    /// Rows of the batch differ in category_id / name_id (a loop of like calls has one of each).
    static constexpr unsigned kShapeCategoryPerRow = 1u << (kOptionalEventColumns + 2);
    static constexpr unsigned kShapeNamePerRow = 1u << (kOptionalEventColumns + 3);
    /// ?1-?3: the batch-wide track, category and name; per-row parameters follow.
    static constexpr int kFirstPerRowParameter = 4;

    schema::DbHandle m_db;
    std::string m_path;
    std::unique_ptr<EventPages> m_pages; ///< with eventPages, until settleEvents()
    /// event_detail batches by shape (errno, fd, tag: one bit each), as for events.
    std::array<schema::Statement, 8> m_insDetailBatch;
    /// Batch statements by shape: most events leave most optional columns NULL, and a column
    /// the INSERT does not name defaults to NULL without a bind or a copy per row.
    std::array<schema::Statement, 1u << (kOptionalEventColumns + 4)> m_insEventBatch;
    std::vector<EventRow> m_pendingEvents;
    unsigned m_pendingShape = 0; ///< optional columns set in any pending event, depth bit
    std::vector<std::pair<int64_t, EventDetail>> m_pendingDetails;
    std::vector<PendingArg> m_pendingArgs; ///< the first m_argCount are buffered rows
    size_t m_argCount = 0;
    schema::Statement m_insArgBatch;
    schema::Statement m_insString, m_insObject, m_insCommunicator, m_insProcess, m_insThread,
        m_insTrack, m_insEvent, m_insDetail, m_insArg, m_finishTrack, m_insMeta, m_insCompletion;
    std::unordered_map<std::string, int64_t> m_strings;
    std::unordered_map<int64_t, int64_t> m_objects;
    std::vector<const std::string*> m_stringText; ///< by string id (keys of m_strings)
    std::vector<int64_t> m_objectName;            ///< by object id: its name's string id
    IoTotals m_io;
    struct CommunicatorRow {
        int64_t id;
        bool hasSize;
    };
    std::unordered_map<std::string, CommunicatorRow> m_communicators;
    const std::string* m_lastCommunicatorKey = nullptr; ///< the last one interned (a key of m_communicators)
    CommunicatorRow* m_lastCommunicator = nullptr;
    schema::Statement m_setCommunicatorSize;
    int64_t m_nextString = 1, m_nextObject = 1, m_nextCommunicator = 1, m_nextThread = 1,
            m_nextTrack = 1, m_nextEvent = 1;
    int64_t m_detailRows = 0; ///< event_detail rows written (the statistics; event's: m_nextEvent - 1)
    schema::CategorySet m_categories; ///< of the events written (metadata event_categories)
    bool m_categoryOutOfRange = false; ///< an event's category id is not one byte: no such row
    Status m_error;
};


} // namespace hpcprof::store
