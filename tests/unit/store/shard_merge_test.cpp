// SPDX-License-Identifier: MIT
// The shard merge (shards.hpp) against the conversion of the same raw data in one piece: three
// nodes on their own hosts and clocks whose processes interleave in time (so the merge switches
// shard at every process, and copies some runs of processes at once), each node interning its
// strings in its own order (so the merge maps them), with I/O details, MPI completions, a second
// thread and a process without events. Every row must be the one-piece conversion's, with its ids,
// whether the merge wrote the event rows below SQL or with SQL.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/store/merge.hpp"
#include "hpcprof/store/shards.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::test;
namespace fs = std::filesystem;
namespace raw = schema::raw;
using schema::Op;

namespace {

uint16_t op(Op o) { return uint16_t(o); }

/// One rank of node `node` starting at `startNs` of the job (realtime), its node's monotonic
/// clock `clockBase` ahead; `files` in the order the process first names them.
void writeRank(const fs::path& nodeDir, int node, int rank, int64_t startNs, int64_t clockBase,
               const std::vector<std::string>& files, bool withEvents = true) {
    const std::string host = "host" + std::to_string(node);
    auto h = makeProcessHeader(1000 + rank, startNs + clockBase, rank, host.c_str());
    h.start.realtimeNs = 1'700'000'000'000'000'000 + startNs;
    h.worldSize = 8;
    const uint64_t t = uint64_t(startNs + clockBase);
    h.endMonotonicNs = int64_t(t) + 90'000;
    std::vector<RawThreadBuilder> threads;
    if (withEvents) {
        RawThreadBuilder main(1000 + rank);
        for (size_t i = 0; i < files.size(); ++i) main.string(uint32_t(i + 1), files[i]);
        RawEventSpec irecv{op(Op::MpiIrecv), t + 100, t + 200};
        irecv.flags = raw::kFlagRequest;
        irecv.seq = 7;
        irecv.tag = 3;
        main.event({op(Op::PosixWrite), t + 1'000, t + 2'000, 100 + rank, 1, 5})
            .event(irecv)
            .event({op(Op::PosixPread64), t + 3'000, t + 3'500, 512, uint32_t(files.size()), 6,
                    raw::kFlagHasOffset, 0, 8192 * rank})
            .mpiCompletion(true, 7, (rank + 1) % 8, 3, 32)
            .event({op(Op::MpiWaitall), t + 4'000, t + 5'000 + uint64_t(rank) * 100, 32, 0, -1, 0, 0, -1, 0, -1, 1});
        threads.push_back(main);
        if (rank % 2 == 0) {
            RawThreadBuilder helper(2000 + rank);
            helper.string(1, files.front()).event({op(Op::PosixRead), t + 6'000, t + 6'100, 10, 1, 7});
            threads.push_back(helper);
        }
    }
    writeRawProcess(nodeDir, h, threads);
}

/// Every process folder of the nodes, linked into one folder: the one-piece conversion's input.
fs::path wholeFolder(const TempDir& dir, int nodes) {
    fs::path whole = dir.path() / "whole";
    fs::create_directories(whole);
    for (int n = 0; n < nodes; ++n)
        for (const auto& p : fs::directory_iterator(dir.path() / ("node" + std::to_string(n))))
            fs::create_directory_symlink(p.path(), whole / p.path().filename());
    return whole;
}

/// Each node folder converted into its shard; the merge's options for them.
store::ShardMergeOptions convertNodes(const TempDir& dir, int nodes, int ranks) {
    store::ShardMergeOptions m;
    for (int n = 0; n < nodes; ++n) {
        store::MergeOptions o;
        o.rawDir = dir.path() / ("node" + std::to_string(n));
        o.output = dir.path() / ("shard-node" + std::to_string(n) + ".hpcprof");
        auto c = store::convertShard(o, {"node" + std::to_string(n), nodes, ranks});
        INFO(c.status().message());
        REQUIRE(c.ok());
        m.shards.push_back(o.output);
    }
    m.output = dir.path() / "merged.hpcprof";
    return m;
}

/// Three nodes of one rank each (ranks 0, 1, 2 on node0, node1, node2), converted into shards.
store::ShardMergeOptions threeOneRankNodes(const TempDir& dir) {
    writeRank(dir.path() / "node0", 0, 0, 1'000'000, 0, {"/data/a"});
    writeRank(dir.path() / "node1", 1, 1, 1'100'000, 0, {"/data/b"});
    writeRank(dir.path() / "node2", 2, 2, 1'200'000, 0, {"/data/c"});
    return convertNodes(dir, 3, 3);
}

/// Every process of the nodes converted in one piece (the merge's reference); the trace.
fs::path convertWhole(const TempDir& dir, int nodes) {
    store::MergeOptions whole;
    whole.rawDir = wholeFolder(dir, nodes);
    whole.output = dir.path() / "whole.hpcprof";
    auto one = store::mergeRawDirectory(whole);
    INFO(one.status().message());
    REQUIRE(one.ok());
    return whole.output;
}

/// The merged file as SQLite sees it: sound, and its statistics as one conversion's ANALYZE leaves
/// them (the page copy writes the rows of the tables it counted; the metadata has nodes_merged
/// more).
void checkSqliteFile(const TraceQuery& merged, const TraceQuery& whole) {
    CHECK(merged.text("PRAGMA integrity_check") == "ok");
    const std::string stat1 = "SELECT tbl, idx, stat FROM sqlite_stat1 WHERE tbl != 'metadata' ORDER BY tbl, idx";
    CHECK(merged.rows(stat1) == whole.rows(stat1));
}

} // namespace

TEST_CASE("shards of interleaved processes merge into the rows and ids of one conversion",
          "[store][shards]") {
    TempDir dir;
    const fs::path n0 = dir.path() / "node0", n1 = dir.path() / "node1", n2 = dir.path() / "node2";
    // Start order: 0 (node0), 1 (node1), 2, 5, 6, 7 (node2: one run, 6 without events), 3 (node0),
    // 4 (node1).
    writeRank(n0, 0, 0, 1'000'000, 0, {"/data/shared", "/data/a0"});
    writeRank(n0, 0, 3, 1'400'000, 0, {"/data/shared", "/data/a3"});
    writeRank(n1, 1, 1, 1'100'000, 50'000'000, {"/data/only-node1", "/data/shared"});
    writeRank(n1, 1, 4, 1'500'000, 50'000'000, {"/data/shared"});
    writeRank(n2, 2, 2, 1'200'000, 7'000'000, {"/data/c2", "/data/shared"});
    writeRank(n2, 2, 5, 1'250'000, 7'000'000, {"/data/c5"});
    writeRank(n2, 2, 6, 1'260'000, 7'000'000, {}, false);
    writeRank(n2, 2, 7, 1'270'000, 7'000'000, {"/data/shared", "/data/c7"});

    store::ShardMergeOptions m = convertNodes(dir, 3, 8);
    // All shards attached at once, or one at a time (as beyond SQLite's limit of 10).
    m.attachAtOnce = GENERATE(0, 1);
    // The event rows written below SQL (shard_pages.hpp), or with INSERT ... SELECT.
    m.pageCopy = GENERATE(true, false);
    auto merged = store::mergeShards(m);
    INFO(merged.status().message());
    REQUIRE(merged.ok());
    CHECK((merged->pageCopied == m.pageCopy && merged->pageCopyFallback.empty()));
    CHECK(merged->shards == 3);
    CHECK(merged->processes == 8);
    CHECK(merged->events == 7 * 4 + 3);
    CHECK_FALSE(merged->partial);

    TraceQuery q(m.output.string()), w(convertWhole(dir, 3).string());
    checkSqliteFile(q, w);
    CHECK(q.rows("SELECT rank FROM process ORDER BY id") ==
          std::vector<std::string>{"0", "1", "2", "5", "6", "7", "3", "4"});
    for (const char* table : {"string", "object", "event", "event_detail", "event_arg", "mpi_completion",
                              "event_unfinished", "thread", "track", "counter", "stats_by_process"}) {
        INFO(table);
        CHECK(q.scalar(std::string("SELECT COUNT(*) FROM ") + table) ==
              w.scalar(std::string("SELECT COUNT(*) FROM ") + table));
    }
    // Rows with their ids (strings and objects by value: their ids are interning order).
    for (const char* table : {"process", "thread", "track", "counter_track", "counter", "event_detail",
                              "event_arg", "mpi_completion", "event_unfinished"}) {
        INFO(table);
        const std::string sql = std::string("SELECT * FROM ") + table + " ORDER BY 1, 2";
        CHECK(q.rows(sql) == w.rows(sql));
    }
    const std::string stats = "SELECT s.name, b.process_id, b.value FROM stats_by_process b"
                              " JOIN stats s ON s.id = b.stats_id ORDER BY 1, 2";
    CHECK(q.rows(stats) == w.rows(stats));
    CHECK(q.rows("SELECT name, value FROM stats ORDER BY id") == w.rows("SELECT name, value FROM stats ORDER BY id"));
    const std::string meta = "SELECT * FROM metadata WHERE key != 'nodes_merged' ORDER BY key";
    CHECK(q.rows(meta) == w.rows(meta));
    const std::string events = "SELECT * FROM event_view ORDER BY event_id";
    CHECK(q.rows(events) == w.rows(events));
    CHECK(q.rows("SELECT key FROM metadata WHERE key LIKE 'shard%'").empty()); // the shards' own
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'nodes_merged'") == "node0,node1,node2");
}

TEST_CASE("the nodes' conversion warnings are said once, with how many nodes gave each",
          "[store][shards]") {
    TempDir dir;
    store::ShardMergeOptions m = threeOneRankNodes(dir);
    // What each node's converter said (as convertShard keeps it in the shard).
    const std::vector<std::string> said = {
        R"x(["counters not counted on this machine: cycles (no perf_event)", "process 1000: one"])x",
        R"x(["counters not counted on this machine: cycles (no perf_event)"])x",
        R"x(["process 1002: two", "counters not counted on this machine: cycles (no perf_event)"])x"};
    for (int n = 0; n < 3; ++n) {
        const fs::path& shard = m.shards[size_t(n)];
        CHECK(TraceQuery(shard.string()).text("SELECT value FROM metadata WHERE key = 'shard_warnings'") == "[]");
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(shard.c_str(), &db) == SQLITE_OK);
        CHECK(sqlite3_exec(db, ("UPDATE metadata SET value = '" + said[size_t(n)] + "' WHERE key = 'shard_warnings'").c_str(),
                           nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
    }
    auto merged = store::mergeShards(m);
    REQUIRE(merged.ok());
    CHECK(merged->warnings == std::vector<std::string>{
                                  "counters not counted on this machine: cycles (no perf_event) (3 nodes)",
                                  "process 1000: one", "process 1002: two"});
    TraceQuery q(m.output.string());
    CHECK(q.scalar("SELECT COUNT(*) FROM metadata WHERE key = 'shard_warnings'") == 0);
}

TEST_CASE("the merged trace names the categories of every shard's events, or none when a shard does not",
          "[store][shards]") {
    TempDir dir;
    store::ShardMergeOptions m = threeOneRankNodes(dir);
    const std::string row = "SELECT value FROM metadata WHERE key = 'event_categories'";
    const std::string own = TraceQuery(m.shards[0].string()).text(row);
    CHECK(own == "posix_io,mpi_p2p,mpi_wait");
    auto setRow = [&](size_t shard, const std::string& sql) {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(m.shards[shard].c_str(), &db) == SQLITE_OK);
        CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
    };
    // The last node also had NVTX ranges (as if): the trace's row has them, though the first
    // shard, whose metadata the merge starts from, has none.
    setRow(2, "UPDATE metadata SET value = 'posix_io,nvtx' WHERE key = 'event_categories'");
    REQUIRE(store::mergeShards(m).ok());
    CHECK(TraceQuery(m.output.string()).text(row) == "posix_io,mpi_p2p,mpi_wait,nvtx");
    // A shard of a build that did not write the row: the trace says nothing rather than too little.
    std::filesystem::remove(m.output);
    setRow(1, "DELETE FROM metadata WHERE key = 'event_categories'");
    REQUIRE(store::mergeShards(m).ok());
    CHECK(TraceQuery(m.output.string()).scalar("SELECT COUNT(*) FROM metadata WHERE key = 'event_categories'") == 0);
}
