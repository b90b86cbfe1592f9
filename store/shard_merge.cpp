// SPDX-License-Identifier: MIT
// Shards -> one trace, with SQL only (nothing is decoded again):
//   1. each shard in turn is attached; its strings, objects and communicators that the trace
//      lacks are added (interned by value, as one conversion interns them) and temp tables map
//      the shard's ids to the trace's; categories, stats totals and the first shard's metadata
//      are copied;
//   2. the processes of every shard, oldest first across shards (as one conversion orders
//      them), are appended with INSERT ... SELECT: the process row, its threads, tracks, its
//      counter lanes and samples, its stats shares; its events (one contiguous id range per
//      process) join a run of the processes that follow on in the shard and in the trace, and
//      each run's events and the rows of every table keyed by event (details, arguments, MPI
//      completions, ...) are copied with one statement per table. Ids are offset past the rows
//      already there, so processes, threads, tracks, events and counters get the ids one
//      conversion of the same raw data gives; times are shifted by the shard's placement
//      (shard_placement.hpp). The columns copied are those of the schema (shard_copy.hpp).
//   3. the event rows themselves, the bulk of a trace, and the rows keyed by event whose key is
//      their rowid (event_detail, ...) are not copied with SQL but planned run by run and written
//      below SQL once the trace is closed (shard_page_plan.hpp, shard_pages.hpp: the shards'
//      b-tree leaves read, the changed columns re-encoded, the trace's b-trees built over fresh
//      pages). Should that copy meet a row it does not handle, the merge starts again with SQL
//      for every table (the result says so).
#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/tables.hpp"
#include "hpcprof/store/shards.hpp"
#include "shard_copy.hpp"
#include "shard_metadata.hpp"
#include "shard_page_plan.hpp"
#include "shard_placement.hpp"
#include "table_statistics.hpp"

namespace hpcprof::store {

namespace fs = std::filesystem;

namespace {

int64_t scalar(sqlite3* db, const std::string& sql) {
    schema::Statement s(db, sql);
    return s.step() ? s.int64(0) : 0;
}

/// A shard's interned id maps (IdMaps numbers; -1: the shard's ids are the trace's).
struct Mapped {
    int strings = -1, objects = -1, communicators = -1;
};

/// Consecutive processes of one shard in the trace's order whose events follow on in both: their
/// event rows (and the rows hanging off them) are copied with one statement per table.
struct EventRun {
    size_t shard = 0;
    int64_t first = 0, last = -1; ///< the shard's event ids
    int64_t offset = 0;           ///< + offset = the trace's ids
    int64_t trackOffset = 0;      ///< the same for their tracks
    bool empty() const { return last < first; }
};

/// The trace being merged and the shards. Up to SQLite's limit on attached databases they are
/// all attached at once (s0, s1, ...) and the merge is one transaction; beyond it one at a time
/// (as s), with a transaction per stretch.
class ShardMerger {
public:
    ShardMerger(sqlite3* db, const std::vector<ShardInfo>& shards, int attachAtOnce, PagePlan* plan)
        : m_db(db), m_shards(shards), m_columns(db), m_maps(db), m_plan(plan),
          m_allAttached(int64_t(shards.size()) <=
                        (attachAtOnce > 0 ? attachAtOnce : sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1))) {}

    Status run() {
        m_eventKeyed = m_columns.eventKeyedTables();
        HPCPROF_RETURN_IF_ERROR(checkTables());
        if (m_allAttached) {
            for (size_t k = 0; k < m_shards.size(); ++k) {
                schema::Statement a(m_db, "ATTACH DATABASE ? AS s" + std::to_string(k));
                a.bind(1, std::string_view(m_shards[k].file.string()));
                if (Status s = a.run(); !s.ok()) return Status::error(m_shards[k].file.string() + ": " + s.message());
            }
            HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, "BEGIN"));
        }
        if (m_plan) {
            std::vector<std::string> candidates = {"event"};
            candidates.insert(candidates.end(), m_eventKeyed.begin(), m_eventKeyed.end());
            m_plan->chooseTables(m_db, candidates);
        }
        for (size_t k = 0; k < m_shards.size(); ++k) {
            HPCPROF_RETURN_IF_ERROR(use(k));
            HPCPROF_RETURN_IF_ERROR(mapInterned(k));
            planShard(k);
        }
        for (const auto& [k, p] : globalOrder()) {
            HPCPROF_RETURN_IF_ERROR(use(k));
            Status s = appendProcess(k, *p);
            if (!s.ok()) return Status::error(m_shards[k].file.string() + ": " + s.message());
        }
        HPCPROF_RETURN_IF_ERROR(flushEvents());
        if (m_allAttached) {
            HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, "COMMIT"));
            for (size_t k = 0; k < m_shards.size(); ++k)
                HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, "DETACH DATABASE s" + std::to_string(k)));
            return {};
        }
        return detach();
    }

private:
    using Slice = std::pair<size_t, const ShardInfo::Process*>;

    /// Every table of the schema is one the merge knows how to copy: a table added to the
    /// schema that is neither keyed by event nor below makes the merge fail, not lose its rows.
    Status checkTables() const {
        std::set<std::string> known = {"metadata", "string", "category", "process", "thread",
                                       "track", "object", "communicator", "event", "counter_track",
                                       "counter", "stats", "stats_by_process"};
        known.insert(m_eventKeyed.begin(), m_eventKeyed.end());
        schema::Statement s(m_db, "SELECT name FROM main.sqlite_schema WHERE type = 'table'"
                                  " AND name NOT LIKE 'sqlite_%'");
        while (s.step())
            if (!known.count(s.text(0)))
                return Status::error("internal error: the shard merge does not know how to merge table " + s.text(0));
        return {};
    }

    /// Every shard's processes, oldest first (start on the trace's time base), shard order for
    /// ties.
    std::vector<Slice> globalOrder() const {
        std::vector<Slice> order;
        for (size_t k = 0; k < m_shards.size(); ++k)
            for (const auto& p : m_shards[k].processes) order.emplace_back(k, &p);
        std::stable_sort(order.begin(), order.end(), [&](const Slice& a, const Slice& b) {
            return a.second->startTs + m_shards[a.first].shift < b.second->startTs + m_shards[b.first].shift;
        });
        return order;
    }

    /// The schema name shard k is attached as.
    std::string src(size_t k) const { return m_allAttached ? "s" + std::to_string(k) : std::string("s"); }

    /// Shard k attached (one at a time: the pending events of the previous one copied first).
    Status use(size_t k) {
        if (m_allAttached || m_attached == int64_t(k)) return {};
        HPCPROF_RETURN_IF_ERROR(flushEvents());
        HPCPROF_RETURN_IF_ERROR(detach());
        schema::Statement a(m_db, "ATTACH DATABASE ? AS s");
        a.bind(1, std::string_view(m_shards[k].file.string()));
        HPCPROF_RETURN_IF_ERROR(a.run());
        m_attached = int64_t(k);
        m_columns.forget("s");
        return schema::exec(m_db, "BEGIN");
    }

    Status detach() {
        if (m_attached < 0) return {};
        HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, "COMMIT"));
        m_attached = -1;
        return schema::exec(m_db, "DETACH DATABASE s");
    }

    /// Step 3 for shard k: its tables' roots and its maps, for the rows written below SQL.
    void planShard(size_t k) {
        if (!m_plan) return;
        const Mapped& m = m_mapped[k];
        PagePlan::Maps maps{};
        for (auto [i, number] : {std::pair{0, m.strings}, {1, m.objects}, {2, m.communicators}})
            if (number >= 0) maps[size_t(i)] = &m_maps.map(number);
        m_plan->addShard(m_db, m_columns, src(k), maps);
    }

    static bool isTime(const std::string& c) { return c == "ts" || (c.size() > 3 && c.compare(c.size() - 3, 3, "_ts") == 0); }

    /// The SQL copy's rules for a planned table's column, as an op: interned ids mapped (event),
    /// times shifted, event references offset; the rowid column (NULL in the record) as it is.
    ColumnOp planned(const std::string& table, const std::string& c, const CopyOffsets& o, size_t k) const {
        if (table == "event") {
            const auto& maps = m_plan->maps(k);
            const auto* map = c == "name_id" ? maps[0] : c == "object_id" ? maps[1] : c == "communicator_id" ? maps[2] : nullptr;
            if (map) return {ColumnOp::Kind::Map, 0, map};
            if (c == "track_id") return added(o.track);
            if (c == "id") return {};
        } else if (c == "event_id") {
            return {};
        }
        if (placedColumn(c, o)) return added(isTime(c) ? o.shift : o.event);
        return {};
    }

    /// Adding 0 is copying: the reference shard's rows (no offset, no shift) are copied as they are.
    static ColumnOp added(int64_t n) { return n == 0 ? ColumnOp{} : ColumnOp{ColumnOp::Kind::Add, n, nullptr}; }

    /// Step 1 for shard k: interned rows, their maps (temp.smap<k>, omap<k>, cmap<k>),
    /// categories, stats totals, and the metadata of the first shard.
    Status mapInterned(size_t k) {
        HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, fmt::format(
            "CREATE TEMP TABLE smap{k}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
            "CREATE TEMP TABLE omap{k}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
            "CREATE TEMP TABLE cmap{k}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
            "INSERT OR IGNORE INTO main.string(value) SELECT value FROM {s}.string ORDER BY id;"
            "INSERT INTO smap{k} SELECT x.id, m.id FROM {s}.string x JOIN main.string m ON m.value = x.value;"
            "INSERT INTO main.object(name_id, kind) SELECT sm.new, o.kind FROM {s}.object o"
            " JOIN smap{k} sm ON sm.old = o.name_id"
            " WHERE NOT EXISTS (SELECT 1 FROM main.object m WHERE m.name_id = sm.new) ORDER BY o.id;"
            "INSERT INTO omap{k} SELECT o.id, m.id FROM {s}.object o JOIN smap{k} sm ON sm.old = o.name_id"
            " JOIN main.object m ON m.name_id = sm.new;"
            "INSERT INTO main.communicator(key, size, kind) SELECT key, size, kind FROM {s}.communicator c"
            " WHERE NOT EXISTS (SELECT 1 FROM main.communicator m WHERE m.key = c.key) ORDER BY id;"
            "UPDATE main.communicator SET size = (SELECT c.size FROM {s}.communicator c WHERE c.key ="
            " main.communicator.key) WHERE size IS NULL;"
            "INSERT INTO cmap{k} SELECT c.id, m.id FROM {s}.communicator c JOIN main.communicator m ON m.key = c.key;"
            "INSERT OR IGNORE INTO main.category(id, name, class) SELECT id, name, class FROM {s}.category;"
            "INSERT OR IGNORE INTO main.metadata(key, value) SELECT key, value FROM {s}.metadata;"
            "INSERT INTO main.stats(name, severity, source, value, description)"
            " SELECT name, severity, source, 0, description FROM {s}.stats x"
            " WHERE NOT EXISTS (SELECT 1 FROM main.stats m WHERE m.name = x.name) ORDER BY id;"
            "UPDATE main.stats SET value = value + COALESCE((SELECT x.value FROM {s}.stats x"
            " WHERE x.name = main.stats.name), 0);",
            fmt::arg("k", k), fmt::arg("s", src(k)))));
        Mapped m;
        for (auto [map, number] : {std::pair{"smap", &m.strings}, {"omap", &m.objects}, {"cmap", &m.communicators}}) {
            auto loaded = m_maps.load(fmt::format("temp.{}{}", map, k));
            if (!loaded) return loaded.status();
            *number = *loaded;
        }
        m_mapped.push_back(m);
        return {};
    }

    int64_t top(const char* table) const {
        return scalar(m_db, fmt::format("SELECT COALESCE(MAX(id), 0) FROM main.{}", table));
    }

    /// Runs `table`'s INSERT ... SELECT (columns through `rule`) with `tail` (WHERE ... ORDER BY).
    Status copy(size_t k, const std::string& table, const ColumnRule& rule, const std::string& tail,
                const std::string& joins = {}) {
        auto sql = m_columns.insertSelect(src(k), table, rule, joins);
        if (!sql) return sql.status();
        return schema::exec(m_db, *sql + " " + tail);
    }

    /// Step 2: one process of shard k and everything that hangs off it.
    Status appendProcess(size_t k, const ShardInfo::Process& p) {
        const ShardInfo& s = m_shards[k];
        const int64_t id = top("process") + 1;
        const auto parent = p.parent ? m_processIds.find({k, *p.parent}) : m_processIds.end();
        const std::string parentId =
            parent == m_processIds.end() ? std::string("NULL") : std::to_string(parent->second);
        CopyOffsets o;
        o.shift = s.shift;
        HPCPROF_RETURN_IF_ERROR(copy(k, "process", [&](const std::string& c) -> std::optional<std::string> {
            if (c == "id") return std::to_string(id);
            if (c == "parent_process_id") return parentId;
            if (c == "clock_offset_ns") return fmt::format("e.clock_offset_ns + {}", s.shift);
            if (c == "clock_method" && !s.clockMethod.empty())
                return fmt::format("CASE e.clock_method WHEN 'monotonic' THEN '{}' ELSE e.clock_method END",
                                   s.clockMethod);
            return placedColumn(c, o);
        }, fmt::format("WHERE e.id = {}", p.id)));
        HPCPROF_RETURN_IF_ERROR(copy(k, "stats_by_process", [&](const std::string& c) -> std::optional<std::string> {
            if (c == "stats_id")
                return fmt::format("(SELECT m.id FROM main.stats m JOIN {}.stats x ON x.name = m.name"
                                   " WHERE x.id = e.stats_id)", src(k));
            if (c == "process_id") return std::to_string(id);
            return placedColumn(c, o);
        }, fmt::format("WHERE e.process_id = {} ORDER BY e.stats_id", p.id)));
        m_processIds[{k, p.id}] = id;
        HPCPROF_RETURN_IF_ERROR(appendLanes(k, p.id, id, o));
        return appendCounters(k, p.id, id, o);
    }

    /// Threads and tracks of the process; its events join the pending run.
    Status appendLanes(size_t k, int64_t old, int64_t id, CopyOffsets& o) {
        const std::string s = src(k), where = fmt::format("WHERE e.process_id = {}", old);
        const int64_t firstThread = scalar(m_db, fmt::format("SELECT COALESCE(MIN(id), 0) FROM {}.thread e {}", s, where));
        const int64_t firstTrack = scalar(m_db, fmt::format("SELECT COALESCE(MIN(id), 0) FROM {}.track e {}", s, where));
        schema::Statement range(m_db, fmt::format("SELECT COALESCE(MIN(first_event_id), 0),"
                                                  " COALESCE(MAX(last_event_id), -1) FROM {}.track e {}", s, where));
        EventRun run;
        run.shard = k;
        if (range.step()) run.first = range.int64(0), run.last = range.int64(1);
        o.thread = top("thread") + 1 - firstThread;
        run.trackOffset = o.track = top("track") + 1 - firstTrack;
        run.offset = o.event = m_nextEvent - run.first;
        HPCPROF_RETURN_IF_ERROR(copy(k, "thread", [&](const std::string& c) -> std::optional<std::string> {
            if (c == "id") return fmt::format("e.id + {}", o.thread);
            if (c == "process_id") return std::to_string(id);
            return placedColumn(c, o);
        }, where + " ORDER BY e.id"));
        HPCPROF_RETURN_IF_ERROR(copy(k, "track", [&](const std::string& c) -> std::optional<std::string> {
            if (c == "id") return fmt::format("e.id + {}", o.track);
            if (c == "process_id") return std::to_string(id);
            if (c == "thread_id") return fmt::format("e.thread_id + {}", o.thread);
            return placedColumn(c, o);
        }, where + " ORDER BY e.id"));
        if (run.empty()) return {};
        m_nextEvent = run.last + run.offset + 1;
        if (!m_pending.empty() && m_pending.shard == k && m_pending.offset == run.offset &&
            m_pending.trackOffset == run.trackOffset && m_pending.last + 1 == run.first) {
            m_pending.last = run.last;
            return {};
        }
        HPCPROF_RETURN_IF_ERROR(flushEvents());
        m_pending = run;
        return {};
    }

    /// The pending run of events: the event rows, then the rows of every table keyed by event.
    Status flushEvents() {
        if (m_pending.empty()) return {};
        const EventRun r = m_pending;
        m_pending = {};
        const size_t k = r.shard;
        const Mapped& m = m_mapped[k];
        CopyOffsets o;
        o.event = r.offset;
        o.shift = m_shards[k].shift;
        o.track = r.trackOffset;
        const std::string range = fmt::format("BETWEEN {} AND {}", r.first, r.last);
        // Interned ids looked up only where the shard's differ from the trace's.
        auto mapped = [](int map, const std::string& c) -> std::optional<std::string> {
            if (map < 0) return std::nullopt;
            return fmt::format("hpcprof_map({}, e.{})", map, c);
        };
        auto plan = [&](const std::string& table) {
            return m_plan->addRun(m_columns, src(k), table, k, r.first, r.last, r.offset,
                                  [&](const std::string& c) { return planned(table, c, o, k); });
        };
        if (m_plan && m_plan->covers("event")) {
            HPCPROF_RETURN_IF_ERROR(plan("event"));
        } else {
            HPCPROF_RETURN_IF_ERROR(copy(k, "event", [&](const std::string& c) -> std::optional<std::string> {
                if (c == "id") return fmt::format("e.id + {}", o.event);
                if (c == "track_id") return fmt::format("e.track_id + {}", o.track);
                if (c == "name_id") return mapped(m.strings, c);
                if (c == "object_id") return mapped(m.objects, c);
                if (c == "communicator_id") return mapped(m.communicators, c);
                return placedColumn(c, o);
            }, "WHERE e.id " + range + " ORDER BY e.id"));
        }
        for (const auto& table : m_eventKeyed) {
            if (m_plan && m_plan->covers(table)) {
                HPCPROF_RETURN_IF_ERROR(plan(table));
                continue;
            }
            HPCPROF_RETURN_IF_ERROR(copy(k, table, [&](const std::string& c) -> std::optional<std::string> {
                if (c == "id") return std::string(); // the trace numbers them
                return placedColumn(c, o);
            }, "WHERE e.event_id " + range + " ORDER BY e.event_id"));
        }
        return {};
    }

    /// Counter lanes and their samples (sample ids follow on, as one conversion numbers them).
    Status appendCounters(size_t k, int64_t old, int64_t id, CopyOffsets o) {
        const std::string s = src(k), where = fmt::format("WHERE e.process_id = {}", old);
        const int64_t first = scalar(m_db, fmt::format("SELECT COALESCE(MIN(id), 0) FROM {}.counter_track e {}", s, where));
        o.counterTrack = top("counter_track") + 1 - first;
        HPCPROF_RETURN_IF_ERROR(copy(k, "counter_track", [&](const std::string& c) -> std::optional<std::string> {
            if (c == "id") return fmt::format("e.id + {}", o.counterTrack);
            if (c == "process_id") return std::to_string(id);
            if (c == "thread_id") return fmt::format("e.thread_id + {}", o.thread);
            return placedColumn(c, o);
        }, where + " ORDER BY e.id"));
        return copy(k, "counter", [&](const std::string& c) -> std::optional<std::string> {
            if (c == "id") return std::string(); // the trace numbers them
            if (c == "counter_track_id") return fmt::format("e.counter_track_id + {}", o.counterTrack);
            return placedColumn(c, o);
        }, fmt::format("WHERE e.counter_track_id IN (SELECT id FROM {}.counter_track WHERE process_id = {})"
                       " ORDER BY e.id", s, old));
    }

    sqlite3* m_db;
    const std::vector<ShardInfo>& m_shards;
    ColumnCatalog m_columns;
    IdMaps m_maps;
    PagePlan* m_plan; ///< step 3's plan, nullptr: every row copied with SQL
    const bool m_allAttached;
    int64_t m_attached = -1; ///< one at a time: the shard attached as s
    std::vector<std::string> m_eventKeyed;
    std::vector<Mapped> m_mapped;
    EventRun m_pending;
    int64_t m_nextEvent = 1; ///< the trace's next event id
    std::map<std::pair<size_t, int64_t>, int64_t> m_processIds; ///< (shard, old id) -> id
};

Result<schema::DbHandle> createMerged(const std::string& path) {
    auto db = schema::createTrace(path);
    if (!db) return db.status();
    HPCPROF_RETURN_IF_ERROR(schema::exec(db->get(),
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536;"
        "CREATE UNIQUE INDEX string_value ON string(value);"
        "CREATE INDEX _merge_object_name ON object(name_id);"
        "CREATE INDEX _merge_communicator_key ON communicator(key);"));
    return db;
}

/// Processes aligned through the realtime clock: one conversion counts those on another host
/// than the earliest process's; each shard counted against its own earliest process.
Status recountRealtimeAlignment(sqlite3* db) {
    return schema::exec(db, fmt::format(
        "DELETE FROM stats_by_process WHERE stats_id IN (SELECT id FROM stats WHERE name = '{n}');"
        "INSERT INTO stats_by_process(stats_id, process_id, value) SELECT s.id, p.id, 1 FROM process p,"
        " stats s WHERE s.name = '{n}' AND p.host != (SELECT host FROM process ORDER BY id LIMIT 1)"
        " ORDER BY p.id;"
        "UPDATE stats SET value = (SELECT COUNT(*) FROM stats_by_process b WHERE b.stats_id = stats.id)"
        " WHERE name = '{n}';",
        fmt::arg("n", schema::statInfo(schema::Stat::RealtimeClockAlignment).name)));
}

/// The indexes one conversion builds after its load; the merge's own go.
/// `counted`: tables whose rows the merge counted as it wrote them (step 3): their statistics
/// are written from those counts rather than by reading all their pages again.
Status finishTrace(sqlite3* db, const std::map<std::string, int64_t>& counted = {}) {
    HPCPROF_RETURN_IF_ERROR(schema::exec(db, "DROP INDEX _merge_object_name; DROP INDEX _merge_communicator_key;"
                                             "CREATE INDEX track_process ON track(process_id);"
                                             "CREATE INDEX counter_track_ts ON counter(counter_track_id, ts);"));
    return writeStatistics(db, counted);
}

/// The trace reopened after step 3 wrote below SQL.
Result<schema::DbHandle> reopenMerged(const std::string& path) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    schema::DbHandle db(raw);
    if (rc != SQLITE_OK) return Status::error("cannot reopen " + path + ": " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
    HPCPROF_RETURN_IF_ERROR(schema::exec(db.get(), "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
                                                   " PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -65536;"));
    return db;
}

/// One merge into `path`; with `pageCopy` the planned rows are written below SQL (`pageFailed`
/// set when that failed: the file is then to be dropped and the merge run again without).
Status mergeInto(const std::string& path, const std::vector<ShardInfo>& shards, const Placement& placement,
                 const ShardMergeOptions& options, bool pageCopy, ShardMergeResult& result, bool& pageFailed) {
    PagePlan plan;
    {
        auto db = createMerged(path);
        if (!db) return db.status();
        HPCPROF_RETURN_IF_ERROR(ShardMerger(db->get(), shards, options.attachAtOnce, pageCopy ? &plan : nullptr).run());
        HPCPROF_RETURN_IF_ERROR(recountRealtimeAlignment(db->get()));
        HPCPROF_RETURN_IF_ERROR(writeMergedMetadata(db->get(), shards, placement, result));
        if (plan.empty()) {
            HPCPROF_RETURN_IF_ERROR(finishTrace(db->get()));
            result.processes = scalar(db->get(), "SELECT COUNT(*) FROM process");
            result.events = scalar(db->get(), "SELECT COUNT(*) FROM event"); // written here: cached
            if (pageCopy) result.pageCopyFallback = "no table qualifies";
            return {};
        }
        plan.readRoots(db->get());
    }
    std::vector<fs::path> files;
    for (const auto& s : shards) files.push_back(s.file);
    std::map<std::string, int64_t> counted;
    const unsigned threads = options.threads > 0 ? unsigned(options.threads) : std::max(1u, std::thread::hardware_concurrency());
    if (Status s = plan.write(path, files, counted, threads); !s.ok()) {
        pageFailed = true;
        return s;
    }
    auto db = reopenMerged(path);
    if (!db) return db.status();
    HPCPROF_RETURN_IF_ERROR(finishTrace(db->get(), counted));
    result.processes = scalar(db->get(), "SELECT COUNT(*) FROM process");
    result.pageCopied = plan.covers("event");
    // The rows written below SQL, counted as they were packed; a COUNT(*) would read every page
    // of the trace back.
    const auto written = counted.find("event");
    result.events = written != counted.end() ? written->second : scalar(db->get(), "SELECT COUNT(*) FROM event");
    return {};
}

} // namespace

std::vector<fs::path> listShards(const fs::path& folder) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folder, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("shard-", 0) == 0 && e.path().extension() == ".hpcprof") out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

Result<ShardMergeResult> mergeShards(const ShardMergeOptions& options) {
    if (options.shards.empty()) return Status::error("no shard to merge");
    auto pending = schema::PendingOutput::begin(options.output, options.force);
    if (!pending) return pending.status();
    std::vector<ShardInfo> shards;
    for (const auto& f : options.shards) {
        auto info = readShardInfo(f);
        if (!info) return Status::error(f.string() + ": " + info.status().message());
        shards.push_back(std::move(info.value()));
    }
    const Placement placement = placeShards(shards);
    ShardMergeResult result;
    bool pageFailed = false;
    Status merged = mergeInto(pending->path(), shards, placement, options, options.pageCopy, result, pageFailed);
    if (pageFailed) { // again with SQL for the events
        result = {};
        result.pageCopyFallback = merged.message();
        fs::remove(pending->path());
        bool unused = false;
        merged = mergeInto(pending->path(), shards, placement, options, false, result, unused);
    }
    HPCPROF_RETURN_IF_ERROR(merged);
    result.shards = int64_t(shards.size());
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return result;
}

} // namespace hpcprof::store
