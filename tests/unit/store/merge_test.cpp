// SPDX-License-Identifier: MIT
// The store step on hand-written raw folders: exact rows, times, strings, nesting, stats.
#include <catch2/catch.hpp>

#include <filesystem>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/store/merge.hpp"
#include "merge_raw.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using hpcprof::schema::Op;
namespace raw = hpcprof::schema::raw;
using test::RawThreadBuilder;

namespace {
store::MergeResult mergeOk(const test::TempDir& dir) { return test::mergeRaw(dir); }
uint16_t op(Op o) { return uint16_t(o); }
} // namespace

TEST_CASE("store converts events with names, objects, bytes and times relative to the origin",
          "[store]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(100, 1'000'000, 0);
    h.endMonotonicNs = 2'000'000;
    RawThreadBuilder t(100);
    t.string(1, "/data/input.bin")
        .event({op(Op::PosixOpen), 1'000'100, 1'000'600, -1, 1, 3})
        .event({op(Op::PosixRead), 1'001'000, 1'003'000, 4096, 1, 3})
        .event({op(Op::PosixPread64), 1'004'000, 1'004'500, 512, 1, 3, raw::kFlagHasOffset, 0, 8192})
        .event({op(Op::PosixWrite), 1'005'000, 1'005'100, -1, 1, 3, raw::kFlagFailed, 9 /*EBADF*/});
    test::writeRawProcess(dir.path() / "raw", h, {t});
    auto r = mergeOk(dir);
    CHECK(r.events == 4);
    CHECK(r.processes == 1);
    CHECK_FALSE(r.partial);

    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT rank, pid, tid, name, ts_ns, dur_ns, bytes, object, object_kind, class,"
                 " category FROM event_view ORDER BY ts_ns") ==
          std::vector<std::string>{
              "0|100|100|open|100|500||/data/input.bin|file|io|posix_io",
              "0|100|100|read|1000|2000|4096|/data/input.bin|file|io|posix_io",
              "0|100|100|pread64|4000|500|512|/data/input.bin|file|io|posix_io",
              "0|100|100|write|5000|100||/data/input.bin|file|io|posix_io"});
    CHECK(q.rows("SELECT e.offset, d.errno, d.fd FROM event e LEFT JOIN event_detail d ON e.id = d.event_id"
                 " WHERE e.offset IS NOT NULL OR d.event_id IS NOT NULL ORDER BY e.ts") ==
          std::vector<std::string>{"8192||", "|9|3"});
    CHECK(q.text("SELECT end_state FROM process") == "exited");
    CHECK(q.scalar("SELECT end_ts - start_ts FROM process") == 1'000'000);
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "false");
    CHECK(q.scalar("SELECT first_event_id FROM track") == 1);
    CHECK(q.scalar("SELECT last_event_id FROM track") == 4);
}

TEST_CASE("store sorts a thread's events by start and computes nesting depth", "[store]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(7, 0);
    RawThreadBuilder t(7);
    // A signal handler's write (inner) completes before the interrupted read (outer) is recorded.
    t.event({op(Op::PosixWrite), 150, 160, 64})
        .event({op(Op::PosixRead), 100, 300, 10})
        .event({op(Op::PosixWrite), 400, 410, 10});
    test::writeRawProcess(dir.path() / "raw", h, {t});
    mergeOk(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT name, ts_ns, depth FROM event_view ORDER BY event_id") ==
          std::vector<std::string>{"read|100|0", "write|150|1", "write|400|0"});
}

TEST_CASE("store counts torn records, drops, kills and bad durations in stats", "[store]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(8, 0, 1);
    h.endState = raw::EndState::Running; // never exited: killed
    h.droppedRecords = 5;
    RawThreadBuilder t(8);
    t.event({op(Op::PosixWrite), 10, 20, 1}).tornSlot().event({op(Op::PosixWrite), 30, 25, 1})
        .event({9999, 40, 50, 1});
    test::writeRawProcess(dir.path() / "raw", h, {t});
    auto r = mergeOk(dir);
    CHECK(r.partial);
    CHECK(r.events == 2);
    test::TraceQuery q(dir / "t.hpcprof");
    auto stat = [&](const char* name) {
        return q.scalar(std::string("SELECT value FROM stats WHERE name = '") + name + "'");
    };
    CHECK(stat("records_torn") == 1);
    CHECK(stat("records_dropped") == 5);
    CHECK(stat("processes_ended_abnormally") == 1);
    CHECK(stat("negative_durations") == 1);
    CHECK(stat("unknown_ops") == 1);
    CHECK(q.text("SELECT end_state FROM process") == "abnormal");
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "true");
    CHECK(q.scalar("SELECT sp.value FROM stats_by_process sp JOIN stats s ON s.id = sp.stats_id"
                   " WHERE s.name = 'records_dropped'") == 5);
    CHECK(q.scalar("SELECT COUNT(*) FROM stats") == int64_t(std::size(schema::kStats)));
}

TEST_CASE("a forked child resolves descriptor paths interned by its parent", "[store]") {
    test::TempDir dir;
    auto parent = test::makeProcessHeader(10, 1000);
    RawThreadBuilder pt(10);
    pt.string(1, "/shared/log.txt").event({op(Op::PosixOpen), 1100, 1200, -1, 1, 4});
    auto child = test::makeProcessHeader(11, 2000);
    child.ppid = 10;
    child.parentStartValid = 1;
    child.parentStartNs = 1000;
    child.nextStringId = 2;
    RawThreadBuilder ct(11);
    ct.event({op(Op::PosixWrite), 2100, 2200, 77, 1, 4});
    test::writeRawProcess(dir.path() / "raw", parent, {pt});
    test::writeRawProcess(dir.path() / "raw", child, {ct});
    mergeOk(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT pid, name, object FROM event_view ORDER BY ts_ns") ==
          std::vector<std::string>{"10|open|/shared/log.txt", "11|write|/shared/log.txt"});
    CHECK(q.scalar("SELECT parent_process_id FROM process WHERE pid = 11") ==
          q.scalar("SELECT id FROM process WHERE pid = 10"));
}

TEST_CASE("long strings spanning several records are reassembled", "[store]") {
    test::TempDir dir;
    std::string longPath = "/very/long/" + std::string(300, 'p') + "/file.dat";
    auto h = test::makeProcessHeader(12, 0);
    RawThreadBuilder t(12);
    t.string(1, longPath).event({op(Op::PosixOpen), 1, 2, -1, 1, 3});
    test::writeRawProcess(dir.path() / "raw", h, {t});
    mergeOk(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.text("SELECT object FROM event_view") == longPath);
}

TEST_CASE("several processes claiming one rank: the busiest keeps it", "[store]") {
    test::TempDir dir;
    auto wrapper = test::makeProcessHeader(20, 0, 2);
    RawThreadBuilder wt(20);
    wt.event({op(Op::PosixOpen), 1, 2});
    auto app = test::makeProcessHeader(21, 10, 2);
    RawThreadBuilder at(21);
    for (int i = 0; i < 5; ++i) at.event({op(Op::PosixWrite), uint64_t(20 + i), uint64_t(21 + i), 1});
    test::writeRawProcess(dir.path() / "raw", wrapper, {wt});
    test::writeRawProcess(dir.path() / "raw", app, {at});
    auto r = mergeOk(dir);
    CHECK(r.rankProcesses == 1);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.scalar("SELECT pid FROM process WHERE rank = 2") == 21);
    CHECK(q.text("SELECT rank_source FROM process WHERE pid = 20") == "duplicate claim of rank 2");
}

TEST_CASE("processes on another host are aligned through the wall clock", "[store]") {
    test::TempDir dir;
    auto a = test::makeProcessHeader(30, 5'000, 0, "nodeA");
    auto b = test::makeProcessHeader(31, 900'000'000, 1, "nodeB");
    // nodeB's monotonic clock is unrelated, but it started 1 us after nodeA in wall time.
    b.start.realtimeNs = a.start.realtimeNs + 1'000;
    RawThreadBuilder ta(30), tb(31);
    ta.event({op(Op::PosixWrite), 5'000, 5'010, 1});
    tb.event({op(Op::PosixWrite), 900'000'000, 900'000'010, 1});
    test::writeRawProcess(dir.path() / "raw", a, {ta});
    test::writeRawProcess(dir.path() / "raw", b, {tb});
    mergeOk(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT rank, ts_ns FROM event_view ORDER BY rank") ==
          std::vector<std::string>{"0|0", "1|1000"});
    CHECK(q.text("SELECT clock_method FROM process WHERE rank = 1") == "realtime");
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'clock_aligned_by_realtime'") == 1);
}

TEST_CASE("a polling loop that alternates functions is one event that names the others", "[store]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(100, 0, 0);
    RawThreadBuilder t(100);
    uint32_t others = uint32_t(Op::MpiTest) | uint32_t(Op::MpiTestsome) << 16;
    t.event({op(Op::MpiIprobe), 1'000, 9'000, -1, 0, -1, raw::kFlagFolded, 0, 700, others})
        .event({op(Op::MpiTest), 10'000, 12'000, -1, 0, -1, raw::kFlagFolded, 0, 40});
    test::writeRawProcess(dir.path() / "raw", h, {t});
    mergeOk(dir);
    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT name, count, dur_ns FROM event_view ORDER BY ts_ns") ==
          std::vector<std::string>{"MPI_Iprobe|700|8000", "MPI_Test|40|2000"});
    // Only the mixed loop carries the list.
    CHECK(q.rows("SELECT event_id, value FROM event_arg WHERE key = 'also_polled'") ==
          std::vector<std::string>{"1|MPI_Test,MPI_Testsome"});
}

TEST_CASE("merge refuses to overwrite a trace and reports a missing raw folder", "[store]") {
    test::TempDir dir;
    store::MergeOptions o;
    o.rawDir = dir.path() / "nope";
    o.output = dir / "t.hpcprof";
    auto r = store::mergeRawDirectory(o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("not a raw directory"));
    std::filesystem::create_directories(dir.path() / "raw");
    FILE* f = std::fopen((dir / "t.hpcprof").c_str(), "w");
    std::fclose(f);
    o.rawDir = dir.path() / "raw";
    r = store::mergeRawDirectory(o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("--force"));
    o.force = true;
    CHECK(store::mergeRawDirectory(o).ok());
}

TEST_CASE("a damaged raw file is counted and the rest is kept", "[store]") {
    test::TempDir dir;
    auto h = test::makeProcessHeader(40, 0);
    RawThreadBuilder t(40);
    t.event({op(Op::PosixWrite), 1, 2, 3});
    auto folder = test::writeRawProcess(dir.path() / "raw", h, {t});
    std::FILE* f = std::fopen((folder / "thread-999").c_str(), "w");
    std::fputs("garbage", f);
    std::fclose(f);
    std::filesystem::create_directories(dir.path() / "raw" / "proc-1-1");
    auto r = mergeOk(dir);
    CHECK(r.events == 1);
    CHECK(r.stats[size_t(schema::Stat::RawFilesUnreadable)] == 2);
    CHECK(r.warnings.size() >= 2);
}
