// SPDX-License-Identifier: MIT
// `hpcprof report` and `hpcprof diff` end to end: an imbalanced 4-rank MPI-shaped trace (rank 2
// computes three times longer before every Allreduce) through every output format, CI gates and
// their exit codes, the HTML page rendered by headless chromium with hostile names, the JSON
// report validated against docs/report-schema.json, bad traces, and diff regressions.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using schema::Category;
using nlohmann::json;

namespace {

constexpr const char* kHostile = "<script>alert(1)</script>";

// 4 ranks, 10 iterations of 3200 ns. Rank 2 computes 3000 ns, the others 1000 ns, then all enter
// MPI_Allreduce, which completes for everyone at iteration start + 3200.
//   ranks 0,1,3: Allreduce [t+1000, t+3200): wait 2000 (until rank 2 enters at t+3000)
//   rank 2:      Allreduce [t+3000, t+3200): wait 0
// compute: 10 000 (ranks 0,1,3), 30 000 (rank 2) -> load balance 15 000 / 30 000 = 0.5.
test::TraceBuilder imbalanced(int64_t slowCompute, bool hostileNames) {
    test::TraceBuilder b;
    int tracks[4];
    for (int r = 0; r < 4; ++r) tracks[r] = b.rank(r, 0, 32000, 4);
    for (int i = 0; i < 10; ++i) {
        int64_t t = 3200 * i;
        for (int r = 0; r < 4; ++r) {
            int64_t compute = r == 2 ? slowCompute : 1000;
            b.event(tracks[r], Category::MpiCollective, "MPI_Allreduce", t + compute, 3200 - compute)
                .collective("MPI_COMM_WORLD", 4, i)
                .withBytes(4096);
        }
    }
    if (hostileNames) {
        int g = b.gpuStream(tracks[0], 0, 7);
        b.event(g, Category::GpuKernel, kHostile, 100, 50);
        b.event(tracks[1], Category::PosixIo, "read", 10, 5).withBytes(10).withObject(std::string("/data/") + kHostile);
    }
    return b;
}

test::ProcessResult runHpcprof(std::vector<std::string> args) {
    args.insert(args.begin(), test::hpcprofBinary());
    return test::runProcess(args);
}

bool haveProgram(const std::string& name) {
    return test::runProcess({"sh", "-c", "command -v " + name}).exitCode == 0;
}

} // namespace

TEST_CASE("report names the late rank as the straggler and the load balance reflects the imbalance",
          "[integration][report]") {
    test::TempDir dir;
    imbalanced(3000, false).write(dir / "job.hpcprof");
    auto r = runHpcprof({"report", dir / "job.hpcprof", "--format", "json"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    json doc = json::parse(r.out);
    CHECK(doc["schema_version"] == 2);
    CHECK(doc["summary"]["ranks"] == 4);
    CHECK(doc["pop"]["load_balance"].get<double>() == Approx(0.5));
    CHECK(doc["pop"]["ideal_runtime_ns"] == 30000);
    CHECK(doc["pop"]["transfer_efficiency"].get<double>() == Approx(30000.0 / 32000.0));
    REQUIRE(doc["stragglers"].size() == 1);
    CHECK(doc["stragglers"][0]["rank"] == 2);
    CHECK(doc["stragglers"][0]["times_last"] == 10);
    CHECK(doc["stragglers"][0]["inflicted_wait_ns"] == 60000);
    for (int rank : {0, 1, 3}) {
        CHECK(doc["ranks"][rank]["wait_ns"] == 20000);
        CHECK(doc["ranks"][rank]["compute_ns"] == 10000);
    }
    CHECK(doc["ranks"][2]["wait_ns"] == 0);
    CHECK(doc["ranks"][2]["compute_ns"] == 30000);
    bool straggler = false, imbalance = false;
    for (const auto& f : doc["findings"]) {
        if (f["id"] == "straggler") {
            straggler = true;
            CHECK(f["ranks"] == json::array({2}));
        }
        if (f["id"] == "load-imbalance") {
            imbalance = true;
            CHECK(f["ranks"] == json::array({2}));
            CHECK(f["estimated_gain_ns"] == 15000);
        }
    }
    CHECK(straggler);
    CHECK(imbalance);

    auto text = runHpcprof({"report", dir / "job.hpcprof"});
    REQUIRE(text.exitCode == 0);
    CHECK_THAT(text.out, Catch::Contains("rank 2     last in 10 of 10 collectives"));
    CHECK_THAT(text.out, Catch::Contains("straggler"));
}

TEST_CASE("gates exit with 3 when they fail, 0 when they pass, 2 when malformed, and appear in every format",
          "[integration][report][gates]") {
    test::TempDir dir;
    imbalanced(3000, false).write(dir / "job.hpcprof");
    const std::string trace = dir / "job.hpcprof";
    CHECK(runHpcprof({"report", trace, "--fail-on", "pop.load_balance < 0.85"}).exitCode == 3);
    CHECK(runHpcprof({"report", trace, "--fail-on", "pop.load_balance < 0.4", "--fail-on", "io.exposed_pct > 10"}).exitCode == 0);
    // comm.exposed_pct: (3 x 22 000 + 2 000) / 128 000 = 53.125 %.
    CHECK(runHpcprof({"report", trace, "--fail-on", "comm.exposed_pct > 53.1"}).exitCode == 3);
    CHECK(runHpcprof({"report", trace, "--fail-on", "comm.exposed_pct > 53.2"}).exitCode == 0);
    auto bad = runHpcprof({"report", trace, "--fail-on", "comm.exposed_pct >"});
    CHECK(bad.exitCode == 2);
    CHECK_THAT(bad.err, Catch::Contains("no number"));
    auto unknown = runHpcprof({"report", trace, "--fail-on", "comm.nosuch > 1"});
    CHECK(unknown.exitCode == 2);
    CHECK_THAT(unknown.err, Catch::Contains("comm.nosuch"));

    for (const char* format : {"text", "md", "html", "json", "junit"}) {
        auto r = runHpcprof({"report", trace, "--format", format, "--fail-on", "pop.load_balance < 0.85"});
        INFO(format);
        CHECK(r.exitCode == 3);
        // Each format escapes in its own way: HTML/XML entities, markdown also escapes '_'.
        CHECK_THAT(r.out, Catch::Contains("pop.load_balance &lt; 0.85") || Catch::Contains("pop.load_balance < 0.85") ||
                              Catch::Contains("pop.load\\_balance &lt; 0.85"));
    }
    auto junit = runHpcprof({"report", trace, "--format", "junit", "--fail-on", "pop.load_balance < 0.85",
                          "--junit-severity", "critical"});
    CHECK_THAT(junit.out, Catch::Contains("<testcase classname=\"hpcprof.gates\" name=\"pop.load_balance &lt; 0.85\">"));
    CHECK_THAT(junit.out, Catch::Contains("<failure"));
    CHECK_THAT(junit.out, Catch::Contains("classname=\"hpcprof.findings\" name=\"load-imbalance"));
}

TEST_CASE("the JSON report validates against docs/report-schema.json", "[integration][report]") {
    if (!haveProgram("python3") || test::runProcess({"python3", "-c", "import jsonschema"}).exitCode != 0) {
        WARN("SKIPPED: python3-jsonschema is not installed");
        return;
    }
    test::TempDir dir;
    imbalanced(3000, true).write(dir / "job.hpcprof");
    auto r = runHpcprof({"report", dir / "job.hpcprof", "--format", "json", "-o", dir / "r.json", "--fail-on",
                      "idle_pct > 99"});
    REQUIRE(r.exitCode == 0);
    auto v = test::runProcess({"python3", "-c",
                               "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])),"
                               " json.load(open(sys.argv[2]))); print('valid')",
                               dir / "r.json", std::string(HPCPROF_TEST_SOURCE_DIR) + "/docs/report-schema.json"});
    INFO(v.err);
    CHECK(v.exitCode == 0);
    CHECK_THAT(v.out, Catch::Contains("valid"));
}

TEST_CASE("the HTML report is self-contained and shows hostile names as text in a headless browser",
          "[integration][report][html]") {
    test::TempDir dir;
    imbalanced(3000, true).write(dir / "job.hpcprof");
    auto r = runHpcprof({"report", dir / "job.hpcprof", "--format", "html", "-o", dir / "r.html"});
    REQUIRE(r.exitCode == 0);
    const std::string html = test::readWholeFile(dir / "r.html");
    // Self-contained: no script, no external resource of any kind.
    CHECK(html.find("<script") == std::string::npos);
    for (const char* fetch : {"src=", "href=", "url(", "@import", "https://"}) {
        INFO(fetch);
        CHECK(html.find(fetch) == std::string::npos);
    }
    CHECK_THAT(html, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    CHECK_THAT(html, Catch::Contains("<svg"));

    if (!haveProgram("chromium")) {
        WARN("SKIPPED: chromium is not installed (apt-get install chromium) - HTML not rendered");
        return;
    }
    auto dom = test::runProcess({"timeout", "120", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                 "--no-first-run", "--user-data-dir=" + (dir / "chromium-profile"), "--dump-dom",
                                 "file://" + (dir / "r.html")});
    INFO(dom.err.substr(0, 2000));
    REQUIRE(dom.exitCode == 0);
    // The browser parsed the page into a DOM: the hostile names are text nodes (serialized
    // escaped again), no script element exists, and the charts and findings are there.
    CHECK(dom.out.find("<script") == std::string::npos);
    CHECK_THAT(dom.out, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    CHECK_THAT(dom.out, Catch::Contains("/data/&lt;script&gt;alert(1)&lt;/script&gt;"));
    CHECK_THAT(dom.out, Catch::Contains("straggler"));
    CHECK_THAT(dom.out, Catch::Contains("<svg"));
    CHECK_THAT(dom.out, Catch::Contains("<rect"));
}

namespace {
std::string htmlEscaped(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        case '\'': o += "&#39;"; break;
        default: o += c;
        }
    }
    return o;
}
} // namespace

TEST_CASE("the HTML report gives each finding and example event the hpcprof view command that opens it",
          "[integration][report][html]") {
    test::TempDir dir;
    // A trace name a shell and a browser would both misread if it were not quoted and escaped.
    const std::string trace = dir / "it's <b>$HOME.hpcprof";
    imbalanced(3000, true).write(trace);
    auto js = runHpcprof({"report", trace, "--format", "json"});
    REQUIRE(js.exitCode == 0);
    const json doc = json::parse(js.out);
    REQUIRE_FALSE(doc["findings"].empty());
    auto r = runHpcprof({"report", trace, "--format", "html", "-o", dir / "r.html"});
    REQUIRE(r.exitCode == 0);
    const std::string html = test::readWholeFile(dir / "r.html");
    CHECK(html.find("<b>$HOME") == std::string::npos);
    const std::string quoted = "'" + (dir / "it'\\''s <b>$HOME.hpcprof") + "'";
    std::vector<std::string> commands;
    for (const auto& f : doc["findings"]) {
        commands.push_back("hpcprof view " + quoted + " --finding " + f["id"].get<std::string>());
        for (const auto& id : f["event_ids"]) commands.push_back("hpcprof view " + quoted + " --event " + std::to_string(id.get<int64_t>()));
    }
    REQUIRE(commands.size() > doc["findings"].size()); // some finding has example events
    for (const auto& c : commands) {
        INFO(c);
        CHECK_THAT(html, Catch::Contains("<code class=\"view\">" + htmlEscaped(c) + "</code>"));
    }
    // Copied into a shell, an example event's command starts the GUI on that trace at the event.
    const std::string eventCommand = *std::find_if(commands.begin(), commands.end(), [](const std::string& c) {
        return c.find(" --event ") != std::string::npos;
    });
    const std::string fake = dir / "gui.sh";
    std::ofstream(fake) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " << (dir / "args.txt") << "\n";
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    const std::string bin = std::filesystem::path(test::hpcprofBinary()).parent_path().string();
    auto run = test::runProcess({"sh", "-c", "PATH=" + bin + ":$PATH HPCPROF_GUI=" + fake + " " + eventCommand});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    const std::string eventId = eventCommand.substr(eventCommand.rfind(' ') + 1);
    CHECK(test::readWholeFile(dir / "args.txt") == "--event\n" + eventId + "\n" + trace + "\n");
}

TEST_CASE("a partial trace says so at the top of every readable report, a complete one does not",
          "[integration][report]") {
    test::TempDir dir;
    const std::string path = dir / "job.hpcprof";
    imbalanced(3000, false).write(path);
    auto text = runHpcprof({"report", path});
    REQUIRE(text.exitCode == 0);
    CHECK(text.out.find("PARTIAL TRACE") == std::string::npos);
    {
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
        schema::DbHandle db(raw);
        REQUIRE(schema::exec(raw, "DELETE FROM stats WHERE name = 'records_dropped';"
                                  "INSERT INTO stats(name, severity, source, value, description) VALUES"
                                  " ('records_dropped', 'data_loss', 'capture', 1234, 'lost events')").ok());
    }
    text = runHpcprof({"report", path});
    REQUIRE(text.exitCode == 0);
    CHECK(text.out.find("PARTIAL TRACE: records_dropped = 1234 (see Data quality)") != std::string::npos);
    auto md = runHpcprof({"report", path, "--format", "md"});
    CHECK(md.out.find("> **Partial trace**: records\\_dropped = 1234") != std::string::npos);
    auto html = runHpcprof({"report", path, "--format", "html"});
    CHECK(html.out.find("<strong>Partial trace</strong>: records_dropped = 1234") != std::string::npos);
}

TEST_CASE("report on bad traces says what is wrong and exits with 2", "[integration][report]") {
    test::TempDir dir;
    { std::ofstream(dir / "junk.hpcprof") << "definitely not a database"; }
    auto junk = runHpcprof({"report", dir / "junk.hpcprof"});
    CHECK(junk.exitCode == 2);
    CHECK_THAT(junk.err, Catch::Contains("not an hpcprof trace"));
    auto missing = runHpcprof({"report", dir / "missing.hpcprof"});
    CHECK(missing.exitCode == 2);
    CHECK_THAT(missing.err, Catch::Contains("no such file"));
    imbalanced(3000, false).write(dir / "job.hpcprof");
    auto fmtBad = runHpcprof({"report", dir / "job.hpcprof", "--format", "pdf"});
    CHECK(fmtBad.exitCode == 2);
    auto window = runHpcprof({"report", dir / "job.hpcprof", "--window", "range:NoSuchRange"});
    CHECK(window.exitCode == 2);
    CHECK_THAT(window.err, Catch::Contains("NoSuchRange"));
}

TEST_CASE("diff flags regressions per class, rank and collective and gates on them", "[integration][diff]") {
    test::TempDir dir;
    imbalanced(1000, false).write(dir / "base.hpcprof"); // balanced
    imbalanced(3000, false).write(dir / "new.hpcprof");
    auto r = runHpcprof({"diff", dir / "base.hpcprof", dir / "new.hpcprof", "--format", "json", "--min-delta", "100"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    json doc = json::parse(r.out);
    CHECK(doc["schema"] == "hpcprof-diff");
    bool commRegressed = false, rank2Compute = false, lbRegressed = false;
    for (const auto& row : doc["rows"]) {
        // Base: everyone computes 1000 per iteration; Allreduce 2200 each -> comm 88 000 in total.
        // New: ranks 0,1,3 22 000 each, rank 2 2 000 -> 68 000: comm went down, compute went up.
        if (row["scope"] == "class" && row["name"] == "comm") {
            CHECK(row["base"] == 88000.0);
            CHECK(row["new"] == 68000.0);
            commRegressed = row["regression"].get<bool>();
        }
        if (row["scope"] == "rank" && row["name"] == "rank 2 compute") {
            CHECK(row["base"] == 10000.0);
            CHECK(row["new"] == 30000.0);
            CHECK(row["delta_pct"].get<double>() == Approx(200.0));
            rank2Compute = row["regression"].get<bool>();
        }
        if (row["scope"] == "pop" && row["name"] == "load_balance") lbRegressed = row["regression"].get<bool>();
    }
    CHECK_FALSE(commRegressed);
    CHECK(rank2Compute);
    CHECK(lbRegressed);
    CHECK(doc["summary"]["regressions"].get<int>() >= 2);
    auto gated = runHpcprof({"diff", dir / "base.hpcprof", dir / "new.hpcprof", "--min-delta", "100", "--fail-on",
                          "regressions > 0"});
    CHECK(gated.exitCode == 3);
    CHECK_THAT(gated.out, Catch::Contains("REGRESSION"));
    auto same = runHpcprof({"diff", dir / "base.hpcprof", dir / "base.hpcprof", "--fail-on", "regressions > 0"});
    CHECK(same.exitCode == 0);
    for (const char* format : {"md", "html", "junit"}) {
        auto f = runHpcprof({"diff", dir / "base.hpcprof", dir / "new.hpcprof", "--format", format, "--min-delta", "100"});
        INFO(format);
        CHECK(f.exitCode == 0);
        CHECK_THAT(f.out, Catch::Contains("rank 2 compute"));
    }
}
