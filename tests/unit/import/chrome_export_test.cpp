// SPDX-License-Identifier: MIT
// Chrome export tests: the JSON parses, holds every event with its nesting, honours the window,
// compresses, and imports back to the same events (names, classes, times to the ns, ranks,
// tracks).
#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/chrome_export.hpp"
#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using hpcprof::test::TempDir;
using hpcprof::test::TraceQuery;

namespace {

const std::string kDataDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";

std::string readAll(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb"); // reads plain files too
    REQUIRE(f);
    std::string out;
    char buf[65536];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    gzclose(f);
    return out;
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

Result<analyzer::ChromeExportResult> exportTo(const std::string& trace, const std::string& out,
                                              std::optional<int64_t> from = {},
                                              std::optional<int64_t> to = {}) {
    auto t = analyzer::Trace::open(trace);
    REQUIRE(t.ok());
    analyzer::ChromeExportOptions o;
    o.output = out;
    o.windowStartNs = from;
    o.windowEndNs = to;
    return analyzer::exportChromeTrace(*t, o);
}

std::string importOne(const std::string& in, const std::string& out) {
    import::ImportOptions o;
    o.inputs = {in};
    o.output = out;
    auto r = import::importTraces(o);
    REQUIRE(r.ok());
    return out;
}

/// Everything the round trip must keep, one line per event, in a canonical order.
std::vector<std::string> eventFacts(const TraceQuery& q) {
    return q.rows("SELECT rank, track_kind, track, category, class, name, ts_ns, dur_ns, depth,"
                  " bytes, correlation_id, communicator, seq FROM event_view"
                  " ORDER BY rank, track_kind, track, ts_ns, dur_ns DESC, name");
}

/// A small trace with everything the exporter writes: two ranks, GPU and CPU tracks, nesting,
/// a communicator, objects, details and free args, odd characters in names.
std::string sampleTrace(const TempDir& dir) {
    writeText(dir / "r0.json", R"J({"distributedInfo":{"rank":0,"world_size":2},"traceEvents":[
        {"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"main \"thread\""}},
        {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":7,"tid":8,"ts":100,"dur":50},
        {"ph":"X","cat":"cpu_op","name":"aten::mm\tÄ","pid":7,"tid":8,"ts":101.001,"dur":10.5},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":7,"tid":8,"ts":102,"dur":2,
         "args":{"correlation":11}},
        {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":103.333,"dur":7.777,
         "args":{"device":0,"stream":7,"correlation":11}},
        {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":9,
         "ts":120,"dur":9,"args":{"device":0,"stream":9,"Collective name":"allreduce",
         "dtype":"Float","In msg nelems":10,"Group size":2,"Process Group Name":"0"}},
        {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,
         "ts":130,"dur":1,"args":{"device":0,"stream":7,"bytes":4096}}
    ]})J");
    writeText(dir / "r1.json", R"J({"distributedInfo":{"rank":1,"world_size":2},"traceEvents":[
        {"ph":"X","cat":"cpu_op","name":"aten::add","pid":9,"tid":9,"ts":99.5,"dur":3},
        {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":1,"tid":9,
         "ts":121,"dur":8,"args":{"device":1,"stream":9,"Collective name":"allreduce",
         "dtype":"Float","In msg nelems":10,"Group size":2,"Process Group Name":"0"}}
    ]})J");
    import::ImportOptions o;
    o.inputs = {dir / "r0.json", dir / "r1.json"};
    o.output = dir / "sample.hpcprof";
    auto r = import::importTraces(o);
    REQUIRE(r.ok());
    return dir / "sample.hpcprof";
}

} // namespace

TEST_CASE("the Chrome export parses and holds every event with its nesting", "[export]") {
    TempDir dir;
    std::string trace = sampleTrace(dir);
    auto r = exportTo(trace, dir / "out.json");
    REQUIRE(r.ok());
    CHECK(r->processes == 2);
    CHECK(r->events == 8);
    CHECK(r->flows == 2);
    auto j = nlohmann::json::parse(readAll(dir / "out.json"));
    CHECK(j["hpcprof"]["format"] == "hpcprof-chrome");
    int complete = 0, flowsOut = 0, flowsIn = 0, threads = 0;
    std::map<std::string, const nlohmann::json*> byName;
    for (const auto& e : j["traceEvents"]) {
        std::string ph = e["ph"];
        if (ph == "X") {
            complete++;
            byName[e["name"]] = &e;
        }
        if (ph == "s") flowsOut++;
        if (ph == "f") flowsIn++;
        if (ph == "M" && e["name"] == "thread_name") threads++;
    }
    CHECK(complete == 8);
    CHECK(flowsOut == 1);
    CHECK(flowsIn == 1);
    CHECK(threads == 5);
    // Nesting: the op lies inside the step on the same thread, exactly.
    const auto& step = *byName.at("ProfilerStep#1");
    const auto& op = *byName.at("aten::mm\tÄ");
    CHECK(op["tid"] == step["tid"]);
    CHECK(op["ts"].get<double>() >= step["ts"].get<double>());
    CHECK(op["ts"].get<double>() + op["dur"].get<double>() <=
          step["ts"].get<double>() + step["dur"].get<double>());
    const auto& gemm = *byName.at("gemm");
    CHECK(gemm["args"]["hpcprof_category"] == "gpu_kernel");
    CHECK(gemm["args"]["correlation"] == 11);
    const auto& memcpy = *byName.at("Memcpy HtoD (Pinned -> Device)");
    CHECK(memcpy["args"]["bytes"] == 4096);
    CHECK(memcpy["args"]["copy_kind"] == "HtoD");
    const auto& comm = *byName.at("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    CHECK(comm["cat"] == "gpu_comm_kernel");
    CHECK(comm["args"]["communicator"] == "nccl_pg:0");
}

TEST_CASE("export then import gives back the same events", "[export][roundtrip]") {
    TempDir dir;
    std::string trace = sampleTrace(dir);
    REQUIRE(exportTo(trace, dir / "out.json.gz").ok());
    // The .gz output really is gzip.
    std::ifstream gz(dir / "out.json.gz", std::ios::binary);
    CHECK(gz.get() == 0x1f);
    CHECK(gz.get() == 0x8b);
    std::string back = importOne(dir / "out.json.gz", dir / "back.hpcprof");
    TraceQuery a(trace), b(back);
    auto before = eventFacts(a);
    CHECK(before.size() == 8);
    CHECK(eventFacts(b) == before);
    const char* same[] = {
        "SELECT rank, world_size, pid, command FROM process ORDER BY rank",
        "SELECT t.kind, t.name, t.device, t.stream, th.tid, th.name, t.event_count FROM track t"
        " LEFT JOIN thread th ON th.id = t.thread_id ORDER BY t.process_id, t.kind, t.name",
        "SELECT s.value, a.key, a.value, typeof(a.value) FROM event_arg a JOIN event e ON"
        " e.id = a.event_id JOIN string s ON s.id = e.name_id ORDER BY s.value, a.key",
        "SELECT key, size, kind FROM communicator",
        "SELECT value FROM metadata WHERE key = 'time_origin_realtime_ns'"};
    for (const char* sql : same) {
        INFO(sql);
        CHECK(b.rows(sql) == a.rows(sql));
    }
}

TEST_CASE("a window exports only the events that overlap it", "[export][window]") {
    TempDir dir;
    std::string trace = sampleTrace(dir);
    TraceQuery q(trace);
    // Trace time: rank 1's op starts at 0 (99.5 us); the all-reduce kernels run 20.5-30.5 us.
    auto r = exportTo(trace, dir / "w.json", 20500, 21000);
    REQUIRE(r.ok());
    auto j = nlohmann::json::parse(readAll(dir / "w.json"));
    std::vector<std::string> names;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X") names.push_back(e["name"]);
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"ProfilerStep#1",
                                            "ncclDevKernel_AllReduce_Sum_f32_RING_LL"});
    CHECK(j["hpcprof"]["window_start_ns"] == 20500);
    CHECK(analyzer::parseDuration("1.5s") == 1500000000);
    CHECK(analyzer::parseDuration("250ms") == 250000000);
    CHECK(analyzer::parseDuration("7us") == 7000);
    CHECK(analyzer::parseDuration("42") == 42);
    CHECK_FALSE(analyzer::parseDuration("1.5 parsecs"));
}

TEST_CASE("the real Kineto traces survive export and import unchanged", "[export][roundtrip]") {
    if (!std::filesystem::exists(kDataDir + "/sampled_rank-0.json.gz")) {
        WARN("SKIPPED: " << kDataDir << " is not there");
        return;
    }
    TempDir dir;
    std::string first = importOne(kDataDir, dir / "k.hpcprof");
    auto r = exportTo(first, dir / "k.json");
    REQUIRE(r.ok());
    CHECK(r->events == 9487);
    std::string back = importOne(dir / "k.json", dir / "back.hpcprof");
    TraceQuery a(first), b(back);
    auto before = eventFacts(a);
    CHECK(before.size() == 9487);
    CHECK(eventFacts(b) == before);
}
