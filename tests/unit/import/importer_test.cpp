// SPDX-License-Identifier: MIT
// Importer tests on small hand-written Chrome/Kineto files: phases, nesting, metadata, ranks,
// time precision, flows, NCCL metadata, collective alignment and malformed input.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::import;
using hpcprof::test::TempDir;
using hpcprof::test::TraceQuery;
using schema::Stat;

namespace {

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

void writeGzip(const std::string& path, const std::string& text) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f);
    gzwrite(f, text.data(), unsigned(text.size()));
    gzclose(f);
}

Result<ImportResult> importFiles(const std::vector<std::string>& files, const std::string& out,
                                 bool keepPartial = false,
                                 ClockAlignment align = ClockAlignment::Recorded) {
    ImportOptions o;
    for (const auto& f : files) o.inputs.emplace_back(f);
    o.output = out;
    o.keepPartial = keepPartial;
    o.align = align;
    return importTraces(o);
}

int64_t stat(const ImportResult& r, Stat s) { return r.stats[size_t(s)]; }

/// A Kineto-like rank file: one CPU launch + one NCCL all-reduce kernel per step, at `offsetUs`.
std::string kinetoRank(int rank, double offsetUs, int steps, bool collectiveArgs) {
    std::string ev;
    for (int k = 0; k < steps; ++k) {
        double t = 1000.0 + 100.0 * k + offsetUs;
        // Kernel end = t + 50 + (rank-dependent start skew compensated by the duration).
        double start = t + 10 + rank * 3, end = t + 60;
        if (!ev.empty()) ev += ",";
        ev += "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":77,"
              "\"tid\":77,\"ts\":" + std::to_string(t) + ",\"dur\":5,\"args\":{\"correlation\":" +
              std::to_string(k + 1) + "}},";
        ev += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\","
              "\"pid\":0,\"tid\":7,\"ts\":" + std::to_string(start) + ",\"dur\":" +
              std::to_string(end - start) + ",\"args\":{\"device\":" + std::to_string(rank) +
              ",\"stream\":7,\"correlation\":" + std::to_string(k + 1);
        if (collectiveArgs)
            ev += ",\"Collective name\":\"allreduce\",\"dtype\":\"Float\",\"In msg nelems\":1024,"
                  "\"Out msg nelems\":1024,\"Group size\":2,\"Process Group Name\":\"0\"";
        ev += "}}";
    }
    return "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":" + std::to_string(rank) +
           ",\"world_size\":2},\"traceEvents\":[" + ev + "]}";
}

} // namespace

TEST_CASE("plain Chrome traces import with B/E pairs, instants, nesting and names",
          "[import][chrome]") {
    TempDir dir;
    writeText(dir / "t.json", R"([
        {"ph":"M","name":"thread_name","pid":5,"tid":9,"args":{"name":"worker"}},
        {"ph":"B","name":"outer","pid":5,"tid":9,"ts":10},
        {"ph":"X","name":"inner","cat":"cpu_op","pid":5,"tid":9,"ts":12.5,"dur":2.25},
        {"ph":"i","name":"mark","pid":5,"tid":9,"ts":13,"s":"t"},
        {"ph":"E","pid":5,"tid":9,"ts":20},
        {"ph":"X","name":"other thread","pid":5,"tid":10,"ts":11,"dur":1}
    ])");
    auto r = importFiles({dir / "t.json"}, dir / "t.hpcprof");
    REQUIRE(r.ok());
    CHECK(r->events == 4);
    TraceQuery q(dir / "t.hpcprof");
    // Origin = earliest event (10 us); times in ns from it.
    CHECK(q.rows("SELECT name, ts_ns, dur_ns, depth, track FROM event_view WHERE tid = 9"
                 " ORDER BY ts_ns") ==
          std::vector<std::string>{"outer|0|10000|0|worker", "inner|2500|2250|1|worker",
                                   "mark|3000|0|2|worker"});
    CHECK(q.text("SELECT name FROM thread WHERE tid = 9") == "worker");
    CHECK(q.text("SELECT track FROM event_view WHERE tid = 10") == "thread 10");
    CHECK(q.scalar("SELECT rank FROM process") == 0); // no other clue: the file's order
    CHECK(q.text("SELECT rank_source FROM process") == "file order");
}

TEST_CASE("malformed events are counted in stats and never crash the import",
          "[import][malformed]") {
    TempDir dir;
    writeText(dir / "bad.json", R"({"traceEvents":[
        {"ph":"X","name":"ok","pid":1,"tid":1,"ts":1,"dur":1},
        {"ph":"X","name":"no dur","pid":1,"tid":1,"ts":2},
        {"ph":"X","name":"negative","pid":1,"tid":1,"ts":3,"dur":-4},
        {"ph":"X","name":"string ts","pid":1,"tid":1,"ts":"5","dur":1},
        {"ph":"X","name":"no ts","pid":1,"tid":1,"dur":1},
        {"name":"no ph","pid":1,"tid":1,"ts":6},
        {"ph":"X","name":7,"pid":1,"tid":1,"ts":7,"dur":1},
        {"ph":"X","name":"object pid","pid":{"a":1},"tid":1,"ts":7,"dur":1},
        {"ph":"E","pid":1,"tid":1,"ts":8},
        {"ph":"B","name":"never ends","pid":1,"tid":1,"ts":9},
        {"ph":"C","name":"counter","pid":1,"ts":9,"args":{"v":1}},
        {"ph":"X","name":"odd cat","cat":"brand_new","pid":1,"tid":1,"ts":10,"dur":1},
        42,
        "text"
    ]})");
    auto r = importFiles({dir / "bad.json"}, dir / "bad.hpcprof");
    REQUIRE(r.ok());
    CHECK(stat(*r, Stat::ImportDurationsInvalid) == 2);
    CHECK(stat(*r, Stat::ImportEventsMalformed) == 7);
    CHECK(stat(*r, Stat::ImportUnmatchedBeginEnd) == 2);
    CHECK(stat(*r, Stat::ImportEventsUnsupported) == 1);
    CHECK(stat(*r, Stat::ImportUnknownCategories) == 1);
    CHECK(r->partial);
    TraceQuery q(dir / "bad.hpcprof");
    CHECK(q.rows("SELECT name, dur_ns FROM event_view ORDER BY ts_ns") ==
          std::vector<std::string>{"ok|1000", "no dur|0", "negative|0", "never ends|0",
                                   "odd cat|1000"});
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'import_events_malformed'") == 7);
    CHECK(q.scalar("SELECT value FROM stats_by_process WHERE process_id = 1 AND stats_id ="
                   " (SELECT id FROM stats WHERE name = 'import_durations_invalid')") == 2);
}

TEST_CASE("damaged files fail with the file and position, or keep what was read",
          "[import][malformed]") {
    TempDir dir;
    const std::string good = kinetoRank(0, 0, 3, false);
    writeText(dir / "trunc.json", good.substr(0, good.size() / 2));
    writeText(dir / "empty.json", "");
    writeText(dir / "notjson.json", "this is not JSON\n");
    writeText(dir / "wrongtop.json", "{\"traceEvents\": 5}");

    auto r = importFiles({dir / "trunc.json"}, dir / "a.hpcprof");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("trunc.json"));
    CHECK_THAT(r.status().message(), Catch::Contains("line 1, column"));
    // The parser stops one character past the end of the cut file.
    CHECK_THAT(r.status().message(),
               Catch::Contains("(byte " + std::to_string(good.size() / 2 + 1) + ")"));
    CHECK_FALSE(std::filesystem::exists(dir / "a.hpcprof"));

    auto kept = importFiles({dir / "trunc.json"}, dir / "b.hpcprof", true);
    REQUIRE(kept.ok());
    CHECK(stat(*kept, Stat::ImportFilesTruncated) == 1);
    CHECK(kept->events >= 2);
    CHECK(kept->events < 6);

    auto e = importFiles({dir / "empty.json"}, dir / "c.hpcprof");
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.status().message(), Catch::Contains("empty.json"));
    CHECK_THAT(e.status().message(), Catch::Contains("unexpected end of input"));

    auto n = importFiles({dir / "notjson.json"}, dir / "d.hpcprof");
    REQUIRE_FALSE(n.ok());
    CHECK_THAT(n.status().message(), Catch::Contains("notjson.json"));
    CHECK_THAT(n.status().message(), Catch::Contains("line 1, column 2 (byte 2)"));
    CHECK_THAT(n.status().message(), Catch::Contains("invalid literal"));

    // Valid JSON of the wrong shape is not a trace: refused with what it is, nothing written.
    auto w = importFiles({dir / "wrongtop.json"}, dir / "e.hpcprof");
    REQUIRE_FALSE(w.ok());
    CHECK_THAT(w.status().message(), Catch::Contains("wrongtop.json: not a trace") &&
                                         Catch::Contains("traceEvents is a number"));
    CHECK_FALSE(std::filesystem::exists(dir / "e.hpcprof"));

    auto missing = importFiles({dir / "nope.json"}, dir / "f.hpcprof");
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.status().message(), Catch::Contains("nope.json"));
}

TEST_CASE("a truncated gzip stream is reported as damaged compressed data", "[import][malformed]") {
    TempDir dir;
    std::string big = kinetoRank(0, 0, 2000, false);
    writeGzip(dir / "whole.json.gz", big);
    std::ifstream in(dir / "whole.json.gz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    writeText(dir / "cut.json.gz", bytes.substr(0, bytes.size() / 2));

    auto ok = importFiles({dir / "whole.json.gz"}, dir / "w.hpcprof");
    REQUIRE(ok.ok());
    CHECK(ok->events == 4000);
    auto r = importFiles({dir / "cut.json.gz"}, dir / "c.hpcprof");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("cut.json.gz"));
    auto kept = importFiles({dir / "cut.json.gz"}, dir / "k.hpcprof", true);
    REQUIRE(kept.ok());
    CHECK(stat(*kept, Stat::ImportFilesTruncated) == 1);
    CHECK(kept->events > 0);
    CHECK(kept->events < 4000);
}

TEST_CASE("ranks come from distributedInfo, then the file name, then the order",
          "[import][rank]") {
    TempDir dir;
    writeText(dir / "a.json", kinetoRank(1, 0, 1, false));                    // claims 1
    writeText(dir / "trace_rank-0.json", R"({"traceEvents":[]})");           // name says 0
    writeText(dir / "c.json", R"({"traceEvents":[]})");                      // order: 2 -> 2
    writeText(dir / "d.json", kinetoRank(1, 0, 1, false));                    // duplicate 1
    auto r = importFiles({dir / "a.json", dir / "trace_rank-0.json", dir / "c.json",
                          dir / "d.json"},
                         dir / "r.hpcprof");
    REQUIRE(r.ok());
    REQUIRE(r->processes.size() == 4);
    CHECK(r->processes[0].rank == 1);
    CHECK(r->processes[0].rankSource == "distributedInfo");
    CHECK(r->processes[1].rank == 0);
    CHECK(r->processes[1].rankSource == "file name");
    CHECK(r->processes[2].rank == 2);
    CHECK(r->processes[2].rankSource == "file order");
    CHECK_FALSE(r->processes[3].rank);
    CHECK(stat(*r, Stat::ImportDuplicateRanks) == 1);
    REQUIRE(r->warnings.size() == 1);
    CHECK_THAT(r->warnings[0], Catch::Contains("d.json claims rank 1"));
    TraceQuery q(dir / "r.hpcprof");
    CHECK(q.text("SELECT rank_source FROM process WHERE id = 4") == "duplicate claim of rank 1");
    CHECK(q.scalar("SELECT world_size FROM process WHERE id = 1") == 2);
}

TEST_CASE("time bases and fractional microseconds keep nanosecond precision", "[import][time]") {
    TempDir dir;
    // Rank 1 starts 0.5 us before rank 0 and uses a base time (newer Kineto).
    writeText(dir / "r0.json", R"({"distributedInfo":{"rank":0},"traceEvents":[
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1682725898236567.123,
         "dur":0.001,"args":{"device":0,"stream":7}}]})");
    writeText(dir / "r1.json", R"({"distributedInfo":{"rank":1},"traceEvents":[
        {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0.623,"dur":1.999,
         "args":{"device":1,"stream":7}}],"baseTimeNanoseconds":1682725898236566000})");
    auto r = importFiles({dir / "r0.json", dir / "r1.json"}, dir / "t.hpcprof");
    REQUIRE(r.ok());
    TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT rank, ts_ns, dur_ns FROM event_view ORDER BY rank") ==
          std::vector<std::string>{"0|500|1", "1|0|1999"});
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'time_origin_realtime_ns'") ==
          "1682725898236566623");
    CHECK(q.rows("SELECT id, start_ts, end_ts FROM process ORDER BY id") ==
          std::vector<std::string>{"1|500|501", "2|0|1999"});
    CHECK(q.text("SELECT track FROM event_view WHERE rank = 1") == "GPU 1 stream 7");
}

TEST_CASE("flow events link launches to kernels as correlation ids", "[import][flow]") {
    TempDir dir;
    writeText(dir / "f.json", R"({"traceEvents":[
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":3,"tid":3,"ts":10,"dur":4},
        {"ph":"s","cat":"ac2g","name":"ac2g","id":99,"pid":3,"tid":3,"ts":10},
        {"ph":"f","cat":"ac2g","name":"ac2g","id":99,"pid":0,"tid":7,"ts":20,"bp":"e"},
        {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":5,"args":{"stream":7}},
        {"ph":"f","cat":"ac2g","name":"ac2g","id":5,"pid":0,"tid":99,"ts":20,"bp":"e"}
    ]})");
    auto r = importFiles({dir / "f.json"}, dir / "f.hpcprof");
    REQUIRE(r.ok());
    CHECK(stat(*r, Stat::ImportFlowsUnmatched) == 1); // no track (0, 99)
    TraceQuery q(dir / "f.hpcprof");
    CHECK(q.rows("SELECT name, correlation_id FROM event_view ORDER BY ts_ns") ==
          std::vector<std::string>{"cudaLaunchKernel|99", "gemm|99"});
}

TEST_CASE("NCCL kernels with collective metadata get communicator, sequence and bytes",
          "[import][nccl]") {
    TempDir dir;
    writeText(dir / "r0.json", kinetoRank(0, 0, 3, true));
    auto r = importFiles({dir / "r0.json"}, dir / "n.hpcprof");
    REQUIRE(r.ok());
    TraceQuery q(dir / "n.hpcprof");
    CHECK(q.rows("SELECT category, class, communicator, seq, bytes FROM event_view"
                 " WHERE track_kind = 'gpu_stream' ORDER BY ts_ns") ==
          std::vector<std::string>{"gpu_comm_kernel|communication|nccl_pg:0|0|4096",
                                   "gpu_comm_kernel|communication|nccl_pg:0|1|4096",
                                   "gpu_comm_kernel|communication|nccl_pg:0|2|4096"});
    CHECK(q.rows("SELECT key, size, kind FROM communicator") ==
          std::vector<std::string>{"nccl_pg:0|2|nccl"});
    CHECK(q.rows("SELECT key, value FROM event_arg WHERE event_id = (SELECT MIN(event_id) FROM"
                 " event_view WHERE category = 'gpu_comm_kernel') ORDER BY key") ==
          std::vector<std::string>{"collective|allreduce", "datatype|Float", "in_nelems|1024",
                                   "out_nelems|1024"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE category = 'cuda_api'"
                   " AND correlation_id IS NOT NULL") == 3);
}

TEST_CASE("aligning by collectives recovers a known clock offset between ranks", "[import][align]") {
    TempDir dir;
    // Rank 1's clock runs 1234.567 us ahead; its kernels start at other times but end together.
    writeText(dir / "r0.json", kinetoRank(0, 0, 20, true));
    writeText(dir / "r1.json", kinetoRank(1, 1234.567, 20, true));
    auto rec = importFiles({dir / "r0.json", dir / "r1.json"}, dir / "rec.hpcprof");
    REQUIRE(rec.ok());
    TraceQuery qr(dir / "rec.hpcprof");
    CHECK(qr.scalar("SELECT MIN(ts_ns) FROM event_view WHERE rank = 1") -
              qr.scalar("SELECT MIN(ts_ns) FROM event_view WHERE rank = 0") ==
          1234567);

    auto r = importFiles({dir / "r0.json", dir / "r1.json"}, dir / "al.hpcprof", false,
                         ClockAlignment::Collectives);
    REQUIRE(r.ok());
    REQUIRE(r->processes.size() == 2);
    CHECK(r->processes[0].aligned);
    CHECK(r->processes[0].offsetNs == 0);
    CHECK(r->processes[1].aligned);
    CHECK(r->processes[1].offsetNs == -1234567);
    CHECK(r->processes[1].matches == 20);
    CHECK(r->processes[1].spreadNs == 0);
    TraceQuery q(dir / "al.hpcprof");
    // Matching instances now end at the same ns on both ranks.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view a JOIN event_view b ON a.seq = b.seq"
                   " AND a.rank = 0 AND b.rank = 1 AND a.category = 'gpu_comm_kernel'"
                   " AND b.category = 'gpu_comm_kernel' AND a.ts_ns + a.dur_ns = b.ts_ns +"
                   " b.dur_ns") == 20);
    CHECK(q.scalar("SELECT MIN(ts) FROM event") == 0);
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'clock_method'") == "nccl_collectives");
    CHECK(q.rows("SELECT rank, clock_method, clock_offset_ns FROM process ORDER BY rank") ==
          std::vector<std::string>{"0|nccl_collectives|0", "1|nccl_collectives|-1234567"});
}

TEST_CASE("alignment without common collectives leaves ranks as recorded and says so",
          "[import][align]") {
    TempDir dir;
    writeText(dir / "r0.json", kinetoRank(0, 0, 2, true));
    writeText(dir / "r1.json", R"({"distributedInfo":{"rank":1},"traceEvents":[
        {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5000,"dur":1}]})");
    auto r = importFiles({dir / "r0.json", dir / "r1.json"}, dir / "a.hpcprof", false,
                         ClockAlignment::Collectives);
    REQUIRE(r.ok());
    CHECK_FALSE(r->processes[1].aligned);
    REQUIRE(r->warnings.size() == 1);
    CHECK_THAT(r->warnings[0], Catch::Contains("no NCCL collective in common"));
}
