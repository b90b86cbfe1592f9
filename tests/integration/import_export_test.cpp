// SPDX-License-Identifier: MIT
// `hpcprof import` and `hpcprof export` end to end through the command line: a recorded trace of
// a sample survives export -> import, the real Kineto traces import with the expected summary,
// bad input gives a clear message and exit code 2.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

const std::string kDataDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";

std::vector<std::string> eventFacts(const TraceQuery& q) {
    return q.rows("SELECT rank, pid, tid, track_kind, track, category, class, name, ts_ns, dur_ns,"
                  " depth, bytes, object, object_kind, count FROM event_view"
                  " ORDER BY pid, tid, track, ts_ns, dur_ns DESC, name");
}

} // namespace

TEST_CASE("a recorded trace of a sample survives export and import unchanged",
          "[integration][import][export]") {
    TempDir dir;
    auto run = runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "io.hpcprof", "--",
                           sampleBinary("io_sample"), dir.path().string()});
    REQUIRE(run.exitCode == 0);
    auto ex = runProcess({hpcprofBinary(), "export", dir / "io.hpcprof", "--format", "chrome",
                          "-o", dir / "io.json.gz"});
    INFO(ex.err);
    REQUIRE(ex.exitCode == 0);
    CHECK_THAT(ex.err, Catch::Contains("-> " + (dir / "io.json.gz")));
    auto im = runProcess({hpcprofBinary(), "import", dir / "io.json.gz", "-o", dir / "back.hpcprof"});
    INFO(im.err);
    REQUIRE(im.exitCode == 0);
    TraceQuery a(dir / "io.hpcprof"), b(dir / "back.hpcprof");
    auto before = eventFacts(a);
    CHECK(before.size() > 20);
    CHECK(eventFacts(b) == before);
    const char* same[] = {
        "SELECT rank, pid, host, command FROM process ORDER BY id",
        "SELECT th.tid, th.name, t.kind, t.name, t.event_count FROM track t JOIN thread th"
        " ON th.id = t.thread_id ORDER BY t.process_id, th.tid",
        "SELECT e.ts, e.offset, d.errno, d.fd, d.tag FROM event e LEFT JOIN event_detail d"
        " ON e.id = d.event_id WHERE e.offset IS NOT NULL OR d.event_id IS NOT NULL"
        " ORDER BY e.ts, e.offset"};
    for (const char* sql : same) {
        INFO(sql);
        CHECK(b.rows(sql) == a.rows(sql));
    }

    // Exporting twice does not replace a file silently.
    auto again = runProcess({hpcprofBinary(), "export", dir / "io.hpcprof", "-o", dir / "io.json.gz"});
    CHECK(again.exitCode == 2);
    CHECK_THAT(again.err, Catch::Contains("already exists"));
}

TEST_CASE("hpcprof import reads the real Kineto traces and reports each rank",
          "[integration][import][kineto]") {
    if (!std::filesystem::exists(kDataDir + "/sampled_rank-0.json.gz")) {
        WARN("SKIPPED: " << kDataDir << " is not there");
        return;
    }
    TempDir dir;
    auto im = runProcess({hpcprofBinary(), "import", kDataDir + "/sampled_rank-0.json.gz",
                          kDataDir + "/sampled_rank-1.json.gz", "-o", dir / "k.hpcprof", "--align",
                          "collectives"});
    INFO(im.err);
    REQUIRE(im.exitCode == 0);
    CHECK_THAT(im.err, Catch::Contains("rank 0 (distributedInfo): 4811 events"));
    CHECK_THAT(im.err, Catch::Contains("rank 1 (distributedInfo): 4676 events"));
    // These sampled traces hold only point-to-point NCCL kernels: nothing to align on.
    CHECK_THAT(im.err, Catch::Contains("no rank has NCCL collective kernels"));
    CHECK_THAT(im.err, Catch::Contains("2 files, 2 processes, 9487 events"));

    auto ex = runProcess({hpcprofBinary(), "export", dir / "k.hpcprof", "-o", dir / "k.json",
                          "--window", "850ms:1s"});
    INFO(ex.err);
    REQUIRE(ex.exitCode == 0);
    std::ifstream in(dir / "k.json");
    auto j = nlohmann::json::parse(in);
    TraceQuery q(dir / "k.hpcprof");
    int64_t expected = q.scalar("SELECT COUNT(*) FROM event WHERE ts < 1000000000"
                                " AND ts + dur >= 850000000");
    int64_t complete = 0;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X") ++complete;
    CHECK(expected > 1000);
    CHECK(complete == expected);
}

TEST_CASE("hpcprof import refuses bad input with the file and position", "[integration][import]") {
    TempDir dir;
    std::ofstream(dir / "cut.json") << R"({"traceEvents":[{"ph":"X","name":"a","ts":1,"dur")";
    std::ofstream(dir / "empty.json");
    auto cut = runProcess({hpcprofBinary(), "import", dir / "cut.json", "-o", dir / "t.hpcprof"});
    CHECK(cut.exitCode == 2);
    // 49 bytes: the parser stops one character past the end.
    CHECK_THAT(cut.err, Catch::Contains("cut.json: parse error at line 1, column 50 (byte 50)"));
    CHECK_FALSE(std::filesystem::exists(dir / "t.hpcprof"));
    auto empty = runProcess({hpcprofBinary(), "import", dir / "empty.json", "-o", dir / "t.hpcprof"});
    CHECK(empty.exitCode == 2);
    CHECK_THAT(empty.err, Catch::Contains("empty.json: parse error at line 1, column 1"));
    auto kept = runProcess({hpcprofBinary(), "import", dir / "cut.json", "--keep-partial", "-o",
                            dir / "t.hpcprof"});
    CHECK(kept.exitCode == 0);
    CHECK_THAT(kept.err, Catch::Contains("import_files_truncated"));
    auto missing = runProcess({hpcprofBinary(), "import", dir / "none.json", "-o", dir / "u.hpcprof"});
    CHECK(missing.exitCode == 2);
    CHECK_THAT(missing.err, Catch::Contains("none.json"));
    auto bad = runProcess({hpcprofBinary(), "export", dir / "t.hpcprof", "-o", dir / "x.json",
                           "--window", "2s:1s"});
    CHECK(bad.exitCode == 2);
    CHECK_THAT(bad.err, Catch::Contains("bad --window"));
}
