// SPDX-License-Identifier: MIT
// Shards -> one trace, with SQL only (nothing is decoded again):
//   1. each shard in turn is attached; its strings, objects and communicators that the trace
//      lacks are added (interned by value, as one conversion interns them) and temp tables map
//      the shard's ids to the trace's; categories, stats totals and the first shard's metadata
//      are copied;
//   2. the processes of every shard, oldest first across shards (as one conversion orders
//      them), are appended with INSERT ... SELECT: the process row, its threads, tracks, events
//      (one contiguous id range per process), their details, arguments and MPI completions, its
//      counter lanes and samples, its stats shares. Ids are offset past the rows already there,
//      so processes, threads, tracks, events and counters get the ids one conversion of the same
//      raw data gives; times are shifted by the shard's placement (shard_placement.hpp).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "hpcprof/schema/output_file.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"
#include "hpcprof/store/shards.hpp"
#include "shard_metadata.hpp"
#include "shard_placement.hpp"

namespace hpcprof::store {

namespace fs = std::filesystem;

namespace {

int64_t scalar(sqlite3* db, const std::string& sql) {
    schema::Statement s(db, sql);
    return s.step() ? s.int64(0) : 0;
}

/// Which of a shard's interned ids differ from the trace's (the copy looks those up).
struct Mapped {
    bool strings = false, objects = false, communicators = false;
};

/// The trace being merged, and the shard attached as `s` (at most one at a time: SQLite attaches
/// few databases).
class ShardMerger {
public:
    ShardMerger(sqlite3* db, const std::vector<ShardInfo>& shards) : m_db(db), m_shards(shards) {}

    Status run() {
        for (size_t k = 0; k < m_shards.size(); ++k) {
            HPCPROF_RETURN_IF_ERROR(attach(k));
            HPCPROF_RETURN_IF_ERROR(mapInterned(k));
        }
        for (const auto& [k, p] : globalOrder()) {
            HPCPROF_RETURN_IF_ERROR(attach(k));
            Status s = appendProcess(k, *p);
            if (!s.ok()) return Status::error(m_shards[k].file.string() + ": " + s.message());
        }
        return detach();
    }

private:
    using Slice = std::pair<size_t, const ShardInfo::Process*>;

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

    Status attach(size_t k) {
        if (m_attached == int64_t(k)) return {};
        HPCPROF_RETURN_IF_ERROR(detach());
        schema::Statement a(m_db, "ATTACH DATABASE ? AS s");
        a.bind(1, std::string_view(m_shards[k].file.string()));
        HPCPROF_RETURN_IF_ERROR(a.run());
        m_attached = int64_t(k);
        return schema::exec(m_db, "BEGIN");
    }

    Status detach() {
        if (m_attached < 0) return {};
        HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, "COMMIT"));
        m_attached = -1;
        return schema::exec(m_db, "DETACH DATABASE s");
    }

    /// Step 1 for shard k: interned rows, their maps (temp.smap<k>, omap<k>, cmap<k>),
    /// categories, stats totals, and the metadata of the first shard.
    Status mapInterned(size_t k) {
        HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, fmt::format(
            "CREATE TEMP TABLE smap{k}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
            "CREATE TEMP TABLE omap{k}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
            "CREATE TEMP TABLE cmap{k}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
            "INSERT OR IGNORE INTO main.string(value) SELECT value FROM s.string ORDER BY id;"
            "INSERT INTO smap{k} SELECT x.id, m.id FROM s.string x JOIN main.string m ON m.value = x.value;"
            "INSERT INTO main.object(name_id, kind) SELECT sm.new, o.kind FROM s.object o"
            " JOIN smap{k} sm ON sm.old = o.name_id"
            " WHERE NOT EXISTS (SELECT 1 FROM main.object m WHERE m.name_id = sm.new) ORDER BY o.id;"
            "INSERT INTO omap{k} SELECT o.id, m.id FROM s.object o JOIN smap{k} sm ON sm.old = o.name_id"
            " JOIN main.object m ON m.name_id = sm.new;"
            "INSERT INTO main.communicator(key, size, kind) SELECT key, size, kind FROM s.communicator c"
            " WHERE NOT EXISTS (SELECT 1 FROM main.communicator m WHERE m.key = c.key) ORDER BY id;"
            "UPDATE main.communicator SET size = (SELECT c.size FROM s.communicator c WHERE c.key ="
            " main.communicator.key) WHERE size IS NULL;"
            "INSERT INTO cmap{k} SELECT c.id, m.id FROM s.communicator c JOIN main.communicator m ON m.key = c.key;"
            "INSERT OR IGNORE INTO main.category(id, name, class) SELECT id, name, class FROM s.category;"
            "INSERT OR IGNORE INTO main.metadata(key, value) SELECT key, value FROM s.metadata;"
            "INSERT INTO main.stats(name, severity, source, value, description)"
            " SELECT name, severity, source, 0, description FROM s.stats x"
            " WHERE NOT EXISTS (SELECT 1 FROM main.stats m WHERE m.name = x.name) ORDER BY id;"
            "UPDATE main.stats SET value = value + COALESCE((SELECT x.value FROM s.stats x"
            " WHERE x.name = main.stats.name), 0);",
            fmt::arg("k", k))));
        auto differs = [&](const char* map) {
            return scalar(m_db, fmt::format("SELECT COUNT(*) FROM {}{} WHERE old != new", map, k)) > 0;
        };
        m_mapped.push_back({differs("smap"), differs("omap"), differs("cmap")});
        return {};
    }

    int64_t top(const char* table) const {
        return scalar(m_db, fmt::format("SELECT COALESCE(MAX(id), 0) FROM main.{}", table));
    }
    int64_t shardScalar(const std::string& sql) const { return scalar(m_db, sql); }

    /// Step 2: one process of shard k and everything that hangs off it.
    Status appendProcess(size_t k, const ShardInfo::Process& p) {
        const ShardInfo& s = m_shards[k];
        const int64_t id = top("process") + 1;
        const auto parent = p.parent ? m_processIds.find({k, *p.parent}) : m_processIds.end();
        const std::string method = s.clockMethod.empty()
                                       ? std::string("clock_method")
                                       : fmt::format("CASE clock_method WHEN 'monotonic' THEN '{}' "
                                                     "ELSE clock_method END", s.clockMethod);
        HPCPROF_RETURN_IF_ERROR(schema::exec(m_db, fmt::format(
            "INSERT INTO main.process(id, rank, world_size, local_rank, rank_source, host, pid, ppid,"
            " parent_process_id, command, exe, start_ts, end_ts, end_state, exit_code, clock_method,"
            " clock_offset_ns, clock_drift_ppb, clock_uncertainty_ns, raw_dir, cwd)"
            " SELECT {id}, rank, world_size, local_rank, rank_source, host, pid, ppid, {parent},"
            " command, exe, start_ts + {S}, end_ts + {S}, end_state, exit_code, {M},"
            " clock_offset_ns + {S}, clock_drift_ppb, clock_uncertainty_ns, raw_dir, cwd"
            " FROM s.process WHERE id = {old};"
            "INSERT INTO main.stats_by_process(stats_id, process_id, value) SELECT m.id, {id}, b.value"
            " FROM s.stats_by_process b JOIN s.stats x ON x.id = b.stats_id JOIN main.stats m"
            " ON m.name = x.name WHERE b.process_id = {old};",
            fmt::arg("id", id), fmt::arg("old", p.id), fmt::arg("S", s.shift), fmt::arg("M", method),
            fmt::arg("parent", parent == m_processIds.end() ? std::string("NULL") : std::to_string(parent->second)))));
        m_processIds[{k, p.id}] = id;
        int64_t threadOffset = 0;
        HPCPROF_RETURN_IF_ERROR(appendLanes(k, p.id, id, threadOffset));
        return appendCounters(k, p.id, id, threadOffset);
    }

    /// Threads, tracks and the process's events (the id range its tracks span).
    Status appendLanes(size_t k, int64_t old, int64_t id, int64_t& threadOffset) {
        const int64_t shift = m_shards[k].shift;
        const std::string where = fmt::format("WHERE process_id = {}", old);
        const int64_t firstThread = shardScalar("SELECT COALESCE(MIN(id), 0) FROM s.thread " + where);
        const int64_t firstTrack = shardScalar("SELECT COALESCE(MIN(id), 0) FROM s.track " + where);
        const int64_t firstEvent = shardScalar("SELECT COALESCE(MIN(first_event_id), 0) FROM s.track " + where);
        const int64_t lastEvent = shardScalar("SELECT COALESCE(MAX(last_event_id), -1) FROM s.track " + where);
        const int64_t T = top("thread") + 1 - firstThread, K = top("track") + 1 - firstTrack;
        const int64_t E = top("event") + 1 - firstEvent;
        threadOffset = T;
        const Mapped& m = m_mapped[k];
        auto mapped = [&](bool differs, const char* alias, const char* column) {
            return differs ? fmt::format("{}.new", alias) : fmt::format("e.{}", column);
        };
        auto join = [&](bool differs, const char* map, const char* alias, const char* column) {
            return differs ? fmt::format(" LEFT JOIN temp.{}{} {} ON {}.old = e.{}", map, k, alias, alias, column)
                           : std::string();
        };
        return schema::exec(m_db, fmt::format(
            "INSERT INTO main.thread(id, process_id, tid, name, recording_stopped_ts, stop_reason,"
            " records_dropped) SELECT id + {T}, {id}, tid, name, recording_stopped_ts + {S},"
            " stop_reason, records_dropped FROM s.thread {where} ORDER BY id;"
            "INSERT INTO main.track(id, process_id, thread_id, kind, name, device, stream,"
            " first_event_id, last_event_id, event_count) SELECT id + {K}, {id}, thread_id + {T},"
            " kind, name, device, stream, first_event_id + {E}, last_event_id + {E}, event_count"
            " FROM s.track {where} ORDER BY id;"
            "INSERT INTO main.event(id, track_id, ts, dur, category_id, name_id, depth, bytes,"
            " object_id, peer, communicator_id, seq, correlation_id, count, offset)"
            " SELECT e.id + {E}, e.track_id + {K}, e.ts + {S}, e.dur, e.category_id, {NAME}, e.depth,"
            " e.bytes, {OBJ}, e.peer, {COMM}, e.seq, e.correlation_id, e.count, e.offset FROM s.event e{JOINS}"
            " WHERE e.id BETWEEN {a} AND {b} ORDER BY e.id;"
            "INSERT INTO main.event_detail(event_id, errno, fd, tag) SELECT event_id + {E},"
            " errno, fd, tag FROM s.event_detail WHERE event_id BETWEEN {a} AND {b} ORDER BY event_id;"
            "INSERT INTO main.event_arg(event_id, key, value) SELECT event_id + {E}, key, value"
            " FROM s.event_arg WHERE event_id BETWEEN {a} AND {b} ORDER BY event_id, key;"
            "INSERT INTO main.mpi_completion(event_id, request, post_event_id, kind, peer, tag, bytes)"
            " SELECT event_id + {E}, request, post_event_id + {E}, kind, peer, tag, bytes"
            " FROM s.mpi_completion WHERE event_id BETWEEN {a} AND {b} ORDER BY event_id, request;"
            "INSERT INTO main.event_unfinished(event_id, requested_bytes) SELECT event_id + {E},"
            " requested_bytes FROM s.event_unfinished WHERE event_id BETWEEN {a} AND {b} ORDER BY event_id;",
            fmt::arg("T", T), fmt::arg("K", K), fmt::arg("E", E), fmt::arg("S", shift),
            fmt::arg("id", id), fmt::arg("where", where), fmt::arg("a", firstEvent),
            fmt::arg("b", lastEvent), fmt::arg("NAME", mapped(m.strings, "sm", "name_id")),
            fmt::arg("OBJ", mapped(m.objects, "om", "object_id")),
            fmt::arg("COMM", mapped(m.communicators, "cm", "communicator_id")),
            fmt::arg("JOINS", join(m.strings, "smap", "sm", "name_id") +
                                  join(m.objects, "omap", "om", "object_id") +
                                  join(m.communicators, "cmap", "cm", "communicator_id"))));
    }

    /// Counter lanes and their samples (sample ids follow on, as one conversion numbers them).
    Status appendCounters(size_t k, int64_t old, int64_t id, int64_t threadOffset) {
        const std::string where = fmt::format("WHERE process_id = {}", old);
        const int64_t first = shardScalar("SELECT COALESCE(MIN(id), 0) FROM s.counter_track " + where);
        const int64_t CT = top("counter_track") + 1 - first;
        return schema::exec(m_db, fmt::format(
            "INSERT INTO main.counter_track(id, process_id, thread_id, name, unit) SELECT id + {CT},"
            " {id}, thread_id + {T}, name, unit FROM s.counter_track {where} ORDER BY id;"
            "INSERT INTO main.counter(counter_track_id, ts, value) SELECT counter_track_id + {CT},"
            " ts + {S}, value FROM s.counter WHERE counter_track_id IN (SELECT id FROM s.counter_track"
            " {where}) ORDER BY id;",
            fmt::arg("CT", CT), fmt::arg("id", id), fmt::arg("T", threadOffset),
            fmt::arg("S", m_shards[k].shift), fmt::arg("where", where)));
    }

    sqlite3* m_db;
    const std::vector<ShardInfo>& m_shards;
    int64_t m_attached = -1;
    std::vector<Mapped> m_mapped;
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

/// The indexes one conversion builds after its load; the merge's own go.
Status finishTrace(sqlite3* db) {
    return schema::exec(db, "DROP INDEX _merge_object_name; DROP INDEX _merge_communicator_key;"
                            "CREATE INDEX track_process ON track(process_id);"
                            "CREATE INDEX counter_track_ts ON counter(counter_track_id, ts);"
                            "ANALYZE;");
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
    {
        auto db = createMerged(pending->path());
        if (!db) return db.status();
        HPCPROF_RETURN_IF_ERROR(ShardMerger(db->get(), shards).run());
        HPCPROF_RETURN_IF_ERROR(writeMergedMetadata(db->get(), shards, placement, result));
        HPCPROF_RETURN_IF_ERROR(finishTrace(db->get()));
        result.processes = scalar(db->get(), "SELECT COUNT(*) FROM process");
        result.events = scalar(db->get(), "SELECT COUNT(*) FROM event");
    }
    result.shards = int64_t(shards.size());
    HPCPROF_RETURN_IF_ERROR(pending->commit());
    return result;
}

} // namespace hpcprof::store
