// SPDX-License-Identifier: MIT
// `hpcprof report` on traces with RDMA work requests (nic_queue lanes built with the test
// TraceBuilder, as the verbs capture writes them): exact per-queue, per-rank and per-call numbers
// in the JSON report, the section in text, markdown and HTML (queue names escaped), the RDMA
// advice, no section for a trace without RDMA, and a report with RDMA and CPU counters validated
// against docs/report-schema.json.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using schema::Category;
using nlohmann::json;

namespace {

constexpr const char* kHostileDevice = "<b>mlx5_1</b>";

/// Two ranks over [0, 1 ms], two MPI_Allreduce instances each.
///   rank 0, "mlx5_0 QP 10", link 400 Gb/s: 4 x 1 MiB RDMA_WRITE posted at 100, 300, 500, 700 us,
///     completing after 10, 11, 12, 13 us, posted inside Allreduce instances 0, 0, 1, 1.
///   rank 1, "<b>mlx5_1</b> QP 11", link 25 Gb/s: 2 x 512 B SEND at 200 and 600 us, completing
///     after 2 and 3 us, posted by no MPI call.
test::TraceBuilder rdmaJob() {
    test::TraceBuilder b;
    int main[2];
    for (int r = 0; r < 2; ++r) {
        main[r] = b.rank(r, 0, 1'000'000, 2);
        for (int i = 0; i < 2; ++i)
            b.event(main[r], Category::MpiCollective, "MPI_Allreduce", 50'000 + 400'000 * i, 300'000)
                .collective("MPI_COMM_WORLD", 2, i)
                .withBytes(4 << 20);
        b.event(main[r], Category::Rdma, "ibv_open_device", 1'000, 500)
            .withArg("link_rate_mbps", int64_t(r == 0 ? 400'000 : 25'000));
    }
    // The posting calls, attributed as the store does (per-cause totals come from them), then
    // their requests on the queue lanes.
    for (int i = 0; i < 4; ++i)
        b.event(main[0], Category::Rdma, "ibv_post_send", 100'000 + 200'000 * i, 400)
            .withBytes(1 << 20)
            .withArg("work_requests", int64_t(1))
            .withArg("caused_by", "MPI_Allreduce")
            .withArg("caused_by_communicator", "MPI_COMM_WORLD")
            .withArg("caused_by_seq", int64_t(i / 2));
    for (int64_t ts : {200'000, 600'000})
        b.event(main[1], Category::Rdma, "ibv_post_send", ts, 300).withBytes(512).withArg("work_requests", int64_t(1));
    int q0 = b.nicQueue(main[0], "mlx5_0", 10);
    for (int i = 0; i < 4; ++i)
        b.event(q0, Category::RdmaWorkRequest, "RDMA_WRITE", 100'000 + 200'000 * i, 10'000 + 1'000 * i)
            .withBytes(1 << 20)
            .withArg("latency_ns", int64_t(10'000 + 1'000 * i))
            .withArg("caused_by", "MPI_Allreduce")
            .withArg("caused_by_communicator", "MPI_COMM_WORLD")
            .withArg("caused_by_seq", int64_t(i / 2));
    int q1 = b.nicQueue(main[1], kHostileDevice, 11);
    b.event(q1, Category::RdmaWorkRequest, "SEND", 200'000, 2'000).withBytes(512).withArg("latency_ns", int64_t(2'000));
    b.event(q1, Category::RdmaWorkRequest, "SEND", 600'000, 3'000).withBytes(512).withArg("latency_ns", int64_t(3'000));
    return b;
}

/// The same job without any RDMA.
test::TraceBuilder plainJob() {
    test::TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        int t = b.rank(r, 0, 1'000'000, 2);
        b.event(t, Category::MpiCollective, "MPI_Allreduce", 50'000, 300'000).collective("MPI_COMM_WORLD", 2, 0);
    }
    return b;
}

/// Runs `hpcprof report TRACE --format FORMAT` and returns the report.
std::string report(const test::TempDir& dir, const std::string& trace, const std::string& format) {
    const std::string out = dir / ("r." + format);
    auto r = test::runProcess({test::hpcprofBinary(), "report", trace, "--format", format, "-o", out});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    return test::readWholeFile(out);
}

/// Adds CPU counters (task clock and run-queue wait of each main thread, 4 samples) and the
/// `counters` metadata, so the report has a `counters` object.
void addCounters(const std::string& path) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    schema::DbHandle h(db);
    REQUIRE(schema::exec(db, "INSERT INTO metadata(key, value) VALUES('counters', '{\"period_ns\":250000,"
                             "\"available\":[],\"unavailable\":[{\"counter\":\"PAPI_TOT_INS\",\"reason\":\"no PMU\","
                             "\"processes\":2}],\"hosts\":[{\"host\":\"node0\",\"online_cpus\":2,"
                             "\"affinity_cpus\":2}]}')")
                .ok());
    for (int64_t tid : {1000, 1001})
        for (const char* name : {"task_clock", "cpu_wait"}) {
            schema::Statement t(db, "INSERT INTO counter_track(process_id, thread_id, name, unit)"
                                    " SELECT th.process_id, th.id, ?, 'ns' FROM thread th WHERE th.tid = ?");
            t.bind(1, std::string_view(name));
            t.bind(2, tid);
            REQUIRE(t.run().ok());
            const int64_t id = sqlite3_last_insert_rowid(db);
            for (int i = 0; i <= 4; ++i) {
                schema::Statement c(db, "INSERT INTO counter(counter_track_id, ts, value) VALUES(?, ?, ?)");
                c.bind(1, id);
                c.bind(2, int64_t(i) * 250'000);
                c.bind(3, double(i) * (name[0] == 't' ? 200'000.0 : 25'000.0));
                REQUIRE(c.run().ok());
            }
        }
}

} // namespace

TEST_CASE("the JSON report gives exact RDMA traffic per queue pair, per rank and per posting call",
          "[integration][report][rdma]") {
    test::TempDir dir;
    rdmaJob().write(dir / "job.hpcprof");
    const json doc = json::parse(report(dir, dir / "job.hpcprof", "json"));
    REQUIRE(doc.contains("rdma"));
    const json& r = doc["rdma"];
    CHECK(r["bin_ns"] == 20'000); // (1 ms + 49) / 50 bins
    CHECK(r["small_bytes"] == 4096);
    REQUIRE(r["queues"].size() == 2);

    const json& q0 = r["queues"][0];
    CHECK(q0["name"] == "mlx5_0 QP 10");
    CHECK(q0["rank"] == 0);
    CHECK(q0["work_requests"] == 4);
    CHECK(q0["bytes"] == 4 << 20);
    CHECK(q0["small_work_requests"] == 0);
    CHECK(q0["first_ts_ns"] == 100'000);
    CHECK(q0["last_end_ns"] == 713'000);
    CHECK(q0["link_rate_mbps"] == 400'000);
    CHECK(q0["achieved_gbps"].get<double>() == Approx(double(4 << 20) * 8 / 613'000));
    // Each 1 MiB lands in one 20 us bin: 8 Mibit / 20 us.
    CHECK(q0["peak_bin_gbps"].get<double>() == Approx(8'388'608.0 / 20'000));
    REQUIRE(q0["gbps_over_time"].size() == 50);
    CHECK(q0["gbps_over_time"][5].get<double>() == Approx(8'388'608.0 / 20'000));
    CHECK(q0["gbps_over_time"][4].get<double>() == 0);
    CHECK(q0["latency_ns"]["p50"] == 11'000);
    CHECK(q0["latency_ns"]["p90"] == 13'000);
    CHECK(q0["latency_ns"]["max"] == 13'000);

    const json& q1 = r["queues"][1];
    CHECK(q1["name"] == std::string(kHostileDevice) + " QP 11");
    CHECK(q1["rank"] == 1);
    CHECK(q1["work_requests"] == 2);
    CHECK(q1["bytes"] == 1024);
    CHECK(q1["small_work_requests"] == 2);
    CHECK(q1["latency_ns"]["p50"] == 2'000);
    CHECK(q1["latency_ns"]["p99"] == 3'000);

    REQUIRE(r["ranks"].size() == 2);
    CHECK(r["ranks"][1]["rank"] == 1);
    CHECK(r["ranks"][1]["link_rate_mbps"] == 25'000);
    // 2 small requests over [200 us, 603 us].
    CHECK(r["ranks"][1]["small_message_rate_per_s"].get<double>() == Approx(2e9 / 403'000));

    REQUIRE(r["causes"].size() == 2);
    CHECK(r["causes"][0]["call"] == "MPI_Allreduce");
    CHECK(r["causes"][0]["communicator"] == "MPI_COMM_WORLD");
    CHECK(r["causes"][0]["instances"] == 2);
    CHECK(r["causes"][0]["work_requests"] == 4);
    CHECK(r["causes"][0]["bytes"] == 4 << 20);
    CHECK(r["causes"][1]["call"].is_null());
    CHECK(r["causes"][1]["work_requests"] == 2);
    CHECK(r["causes"][1]["bytes"] == 1024);

    // Rank 0 moved 4 MiB at 54.7 Gb/s on a 400 Gb/s link: the low-bandwidth advice.
    const json* low = nullptr;
    for (const auto& f : doc["findings"])
        if (f["id"] == "rdma-low-bandwidth") low = &f;
    REQUIRE(low);
    CHECK((*low)["ranks"] == json::array({0}));
    CHECK((*low)["evidence"][0]["value"].get<double>() == Approx(100.0 * double(4 << 20) * 8 / 613'000 / 400));
}

TEST_CASE("text, markdown and HTML reports show the RDMA section with names escaped",
          "[integration][report][rdma]") {
    test::TempDir dir;
    rdmaJob().write(dir / "job.hpcprof");
    const std::string text = report(dir, dir / "job.hpcprof", "text");
    CHECK_THAT(text, Catch::Contains("RDMA traffic per queue pair"));
    CHECK_THAT(text, Catch::Contains("mlx5_0 QP 10"));
    CHECK_THAT(text, Catch::Contains("4.00 MiB"));
    CHECK_THAT(text, Catch::Contains("RDMA traffic by the call that posted it"));
    CHECK_THAT(text, Catch::Contains("MPI_Allreduce"));

    const std::string md = report(dir, dir / "job.hpcprof", "md");
    CHECK_THAT(md, Catch::Contains("### RDMA traffic per queue pair"));
    CHECK_THAT(md, Catch::Contains("| mlx5\\_0 QP 10 | 0 | 4 | 4.00 MiB | 0 |"));
    CHECK(md.find(kHostileDevice) == std::string::npos);

    const std::string html = report(dir, dir / "job.hpcprof", "html");
    CHECK_THAT(html, Catch::Contains("<h2>RDMA</h2>"));
    CHECK_THAT(html, Catch::Contains("<td>mlx5_0 QP 10</td>"));
    CHECK_THAT(html, Catch::Contains("&lt;b&gt;mlx5_1&lt;/b&gt; QP 11"));
    CHECK(html.find(kHostileDevice) == std::string::npos);
    CHECK_THAT(html, Catch::Contains("aria-label=\"bandwidth over time\""));
}

TEST_CASE("a trace without RDMA has no RDMA section in any report", "[integration][report][rdma]") {
    test::TempDir dir;
    plainJob().write(dir / "job.hpcprof");
    CHECK_FALSE(json::parse(report(dir, dir / "job.hpcprof", "json")).contains("rdma"));
    CHECK(report(dir, dir / "job.hpcprof", "text").find("RDMA traffic") == std::string::npos);
    CHECK(report(dir, dir / "job.hpcprof", "md").find("RDMA traffic") == std::string::npos);
    CHECK(report(dir, dir / "job.hpcprof", "html").find("<h2>RDMA</h2>") == std::string::npos);
}

TEST_CASE("a JSON report with RDMA and CPU counters validates against docs/report-schema.json",
          "[integration][report][rdma][counters]") {
    if (test::runProcess({"python3", "-c", "import jsonschema"}).exitCode != 0) {
        WARN("SKIPPED: python3-jsonschema is not installed");
        return;
    }
    test::TempDir dir;
    rdmaJob().write(dir / "job.hpcprof");
    addCounters(dir / "job.hpcprof");
    const json doc = json::parse(report(dir, dir / "job.hpcprof", "json"));
    REQUIRE(doc.contains("counters"));
    REQUIRE(doc.contains("rdma"));
    CHECK(doc["counters"]["present"] == true);
    REQUIRE(doc["counters"]["ranks"].size() == 2);
    CHECK(doc["counters"]["unavailable"][0]["counter"] == "PAPI_TOT_INS");
    auto validate = [&](const json& report) {
        { std::ofstream(dir / "v.json") << report.dump(); }
        return test::runProcess({"python3", "-c",
                                 "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])),"
                                 " json.load(open(sys.argv[2]))); print('valid')",
                                 dir / "v.json", std::string(HPCPROF_TEST_SOURCE_DIR) + "/docs/report-schema.json"});
    };
    auto v = validate(doc);
    INFO(v.err);
    CHECK(v.exitCode == 0);
    CHECK_THAT(v.out, Catch::Contains("valid"));
    // The schema is strict enough to catch a wrong type in either section.
    json badRdma = doc;
    badRdma["rdma"]["queues"][0]["bytes"] = "many";
    CHECK(validate(badRdma).exitCode != 0);
    json badCounters = doc;
    badCounters["counters"]["ranks"][0]["ipc"] = "high";
    CHECK(validate(badCounters).exitCode != 0);
}
