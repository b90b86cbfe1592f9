// SPDX-License-Identifier: MIT
// Every reader of traces (report in each format, --fail-on gates, diff in each format, export,
// view and hpcprof-gui) against damaged traces: missing tables, renamed columns, other
// versions, cut, zeroed and bit-flipped files, files that are not traces, hostile names and a
// hostile path. Each answers with its documented exit code and one line, or with valid output.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "hostile_corpus.hpp"
#include "reader_checks.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kGuiEnv = {"QT_QPA_PLATFORM=offscreen",
                                          "XDG_CONFIG_HOME=/tmp/hpcprof-robustness-gui-config"};

struct Fixture {
    TempDir dir;
    fs::path good = dir.path() / "good.hpcprof";
    ReaderRunner runner{dir.path()};
    Fixture() { corpus::writeHostileTrace(good); }
};

/// report in every format (stdout and -o), with gates; diff both ways in every format.
void runTraceReaders(ReaderRunner& run, const corpus::TraceCase& c, const fs::path& good,
                     const fs::path& out) {
    INFO("trace case: " << c.name);
    const std::string hp = hpcprofBinary(), t = c.path.string();
    const auto codes = ReaderRunner::codes(c.outcome), gated = ReaderRunner::codes(c.outcome, true);
    const std::pair<const char*, Output> formats[] = {{"text", Output::Text},
                                                      {"md", Output::Text},
                                                      {"html", Output::Html},
                                                      {"json", Output::Json},
                                                      {"junit", Output::Junit}};
    for (const auto& [format, kind] : formats)
        run.run({hp, "report", t, "--format", format}, codes, kind, {}, c.refusal);
    const std::string file = (out / "report.json").string();
    run.run({hp, "report", t, "--format", "json", "-o", file}, codes, Output::Json, file,
            c.refusal);
    fs::remove(file);
    // Gates that are always true: a readable trace fails them (3), in JUnit and JSON.
    for (const auto& [format, kind] : {formats[3], formats[4]})
        run.run({hp, "report", t, "--format", format, "--fail-on", "comm.exposed_pct >= 0",
                 "--fail-on", "summary.unused_rows.total >= 0"},
                gated, kind, {}, c.refusal);
    const std::string g = good.string();
    for (const auto& [format, kind] : formats) {
        run.run({hp, "diff", g, t, "--format", format}, codes, kind, {}, c.refusal);
        run.run({hp, "diff", t, g, "--format", format, "--fail-on", "regressions >= 0"}, gated,
                kind, {}, c.refusal);
    }
    const std::string exported = (out / "export.json").string();
    run.run({hp, "export", t, "-o", exported}, codes, Output::Chrome, exported, c.refusal);
    fs::remove(exported);
}

void runGui(ReaderRunner& run, const corpus::TraceCase& c, const fs::path& out) {
    if (!haveGui())
        return;
    INFO("trace case: " << c.name);
    const std::string png = (out / "shot.png").string();
    run.run({guiBinary(), "--screenshot", png, "--size", "640x400", c.path.string()},
            ReaderRunner::codes(c.outcome), Output::Png, png, c.refusal, kGuiEnv);
    fs::remove(png);
    run.run({hpcprofBinary(), "view", c.path.string(), "--screenshot", png},
            ReaderRunner::codes(c.outcome), Output::Png, png, c.refusal, kGuiEnv);
    fs::remove(png);
}

} // namespace

TEST_CASE("report, gates, diff and export refuse traces with a missing table, view or column, or "
          "another version, with one line and exit 2",
          "[robustness][readers]") {
    Fixture f;
    const fs::path out = f.dir.path() / "out";
    fs::create_directory(out);
    for (const auto& c : corpus::damagedTraces(f.good, f.dir.path()))
        if (c.name.rfind("missing-", 0) == 0 || c.name.rfind("renamed-", 0) == 0 ||
            c.name.rfind("version-", 0) == 0 || c.name.rfind("foreign-", 0) == 0)
            runTraceReaders(f.runner, c, f.good, out);
    f.runner.validateQueued();
    ReaderRunner::checkNoLeftovers(f.dir.path());
}

TEST_CASE(
    "report, gates, diff and export survive cut, zeroed and bit-flipped traces and files that "
    "are not traces",
    "[robustness][readers]") {
    Fixture f;
    const fs::path out = f.dir.path() / "out";
    fs::create_directory(out);
    for (const auto& c : corpus::damagedTraces(f.good, f.dir.path()))
        if (c.name.rfind("missing-", 0) != 0 && c.name.rfind("renamed-", 0) != 0 &&
            c.name.rfind("version-", 0) != 0 && c.name.rfind("foreign-", 0) != 0)
            runTraceReaders(f.runner, c, f.good, out);
    f.runner.validateQueued();
    ReaderRunner::checkNoLeftovers(f.dir.path());
}

TEST_CASE("every report format stays valid and terminal-safe with hostile names and a hostile path",
          "[robustness][readers]") {
    Fixture f;
    const fs::path out = f.dir.path() / "out";
    fs::create_directory(out);
    runTraceReaders(f.runner, {"good", f.good, Outcome::Valid, ""}, f.good, out);
    // The names reach the outputs, escaped: the kernel and the file in every format.
    auto json = f.runner.run({hpcprofBinary(), "report", f.good.string(), "--format", "json"}, {0},
                             Output::Json);
    auto doc = nlohmann::json::parse(json.out);
    CHECK(doc["top"]["kernels"][0]["name"] ==
          "gemm\\x1B[31m<red>\\x1B[0m\\x1B]0;pwned\\x07|*_`[x]\\xFF\\xFE\\xC3\\x0D"
          "\\xED\\xA0\\x80\\xC0\\xAF\\xEF\\xBF\\xBE</failure>&amp;]]>");
    CHECK(doc["top"]["files"][0]["name"] ==
          "/data/\\xFF\\x1B[2Jcleared\\x0D\\x07\\xC2\\x9B31m\nnul\\x00byte.bin");
    CHECK(doc["ranks"][0]["host"] == "node\\x1B]2;title\\x07\\xFF\\x0D");
    auto text = f.runner.run({hpcprofBinary(), "report", f.good.string()}, {0}, Output::Text);
    CHECK_THAT(text.out, Catch::Contains("gemm\\x1B[31m<red>"));
    // A gate path beyond 64 bits is an unknown metric, not an exception.
    f.runner.run({hpcprofBinary(), "report", f.good.string(), "--fail-on",
                  "ranks.99999999999999999999.comm_ns > 1"},
                 {2}, Output::None, {}, "no numeric metric");
    // A gate whose text holds control characters is shown escaped when it fails.
    f.runner.run({hpcprofBinary(), "report", f.good.string(), "--format", "junit", "--fail-on",
                  "wall_ns >= 0 \x1b[2J"},
                 {2}, Output::None, {}, "\\x1B[2J");
    for (const auto& c : corpus::damagedTraces(f.good, f.dir.path()))
        if (c.outcome == Outcome::Valid) {
            runTraceReaders(f.runner, c, f.good, out);
            auto r = f.runner.run({hpcprofBinary(), "report", c.path.string(), "--format", "json"},
                                  {0}, Output::Json);
            CHECK_THAT(nlohmann::json::parse(r.out)["trace"].get<std::string>(),
                       Catch::EndsWith("path\\xFF\\x1B[31m\\x0D\\x07\\xC2\\x9B.hpcprof"));
        }
    f.runner.validateQueued();
    ReaderRunner::checkNoLeftovers(f.dir.path());
}

TEST_CASE("rows a report cannot use are counted in its data-quality section in every format",
          "[robustness][readers]") {
    Fixture f;
    const fs::path t = f.dir.path() / "unusable.hpcprof";
    // In the first track: a negative duration, an event far beyond the run, a time beyond
    // 2^62 ns; and an event of a track that does not exist.
    corpus::copyAndRun(f.good, t,
                       "UPDATE event SET dur = -5 WHERE id = (SELECT first_event_id + 1 FROM track "
                       "ORDER BY id LIMIT 1);"
                       "UPDATE event SET ts = 50000000 WHERE id = (SELECT first_event_id + 2 FROM "
                       "track ORDER BY id LIMIT 1);"
                       "UPDATE event SET ts = 4611686018427387905 WHERE id = (SELECT "
                       "first_event_id + 3 FROM track ORDER BY id LIMIT 1);"
                       "INSERT INTO event(id, track_id, ts, dur, category_id, name_id, depth)"
                       " VALUES ((SELECT MAX(id) + 1 FROM event), 9999, 10, 10, 30, 1, 0);");
    auto json = f.runner.run({hpcprofBinary(), "report", t.string(), "--format", "json"}, {0},
                             Output::Json);
    auto doc = nlohmann::json::parse(json.out);
    const auto& unused = doc["summary"]["unused_rows"];
    CHECK(unused["negative_duration"] == 1);
    CHECK(unused["outside_run"] == 1);
    CHECK(unused["time_out_of_range"] == 1);
    CHECK(unused["unknown_track"] == 1);
    CHECK(unused["total"] == 4);
    std::map<std::string, int64_t> quality;
    for (const auto& w : doc["data_quality"])
        quality[w["name"]] = w["count"];
    CHECK(quality["negative_durations_read"] == 1);
    CHECK(quality["events_outside_run"] == 1);
    CHECK(quality["events_time_out_of_range"] == 1);
    CHECK(quality["events_unknown_track"] == 1);
    // The same counts in the other formats, and a gate on them.
    auto text = f.runner.run({hpcprofBinary(), "report", t.string()}, {0}, Output::Text);
    CHECK_THAT(text.out, Catch::Contains("events_unknown_track = 1") &&
                             Catch::Contains("events_outside_run = 1") &&
                             Catch::Contains("events_time_out_of_range = 1"));
    auto md =
        f.runner.run({hpcprofBinary(), "report", t.string(), "--format", "md"}, {0}, Output::Text);
    CHECK_THAT(md.out, Catch::Contains("events\\_unknown\\_track** = 1"));
    auto html = f.runner.run({hpcprofBinary(), "report", t.string(), "--format", "html"}, {0},
                             Output::Html);
    CHECK_THAT(html.out, Catch::Contains("events_unknown_track"));
    auto junit = f.runner.run({hpcprofBinary(), "report", t.string(), "--format", "junit",
                               "--fail-on", "unused_rows.total > 0"},
                              {3}, Output::Junit);
    CHECK_THAT(
        junit.out,
        Catch::Contains("<property name=\"data_quality.events_unknown_track\" value=\"1\"/>"));
    // The clean trace has none.
    auto clean = f.runner.run({hpcprofBinary(), "report", f.good.string(), "--format", "json"}, {0},
                              Output::Json);
    CHECK(nlohmann::json::parse(clean.out)["summary"]["unused_rows"]["total"] == 0);
    f.runner.validateQueued();
}

TEST_CASE("a --window outside the trace is an error in report, diff, export and the GUI",
          "[robustness][readers]") {
    Fixture f;
    const std::string hp = hpcprofBinary(), g = f.good.string();
    const std::string out = (f.dir.path() / "e.json").string();
    for (const char* w : {"10s:20s", "1e30:2e30", "nan:inf", "5s:"}) {
        INFO(w);
        f.runner.run({hp, "report", g, "--window", w}, {2}, Output::None, {}, "window");
        f.runner.run({hp, "diff", g, g, "--window", w}, {2}, Output::None, {}, "window");
        f.runner.run({hp, "export", g, "-o", out, "--window", w}, {2}, Output::None, out, "window");
    }
    f.runner.run({hp, "report", g, "--window", "0:1ms"}, {0}, Output::Text);
    f.runner.run({hp, "export", g, "-o", out, "--window", "0:1ms"}, {0}, Output::Chrome, out);
    if (haveGui()) {
        const std::string png = (f.dir.path() / "w.png").string();
        f.runner.run({guiBinary(), "--screenshot", png, "--window", "10s:20s", g}, {2},
                     Output::None, png, "does not overlap", kGuiEnv);
        // Without --screenshot (offscreen, so no display is needed): an error, not the whole run.
        f.runner.run({guiBinary(), "--window", "10s:20s", g}, {2}, Output::None, {},
                     "does not overlap", kGuiEnv);
        f.runner.run({guiBinary(), "--window", "soon", g}, {2}, Output::None, {}, "--window",
                     kGuiEnv);
    }
    ReaderRunner::checkNoLeftovers(f.dir.path());
}

TEST_CASE(
    "hpcprof-gui and hpcprof view refuse damaged traces and run without a display only offscreen",
    "[robustness][readers][gui]") {
    if (!haveGui()) {
        WARN("SKIPPED: this build has no hpcprof-gui (Qt 6)");
        return;
    }
    Fixture f;
    const fs::path out = f.dir.path() / "out";
    fs::create_directory(out);
    for (const auto& c : corpus::damagedTraces(f.good, f.dir.path()))
        if (c.name == "missing-table-event" || c.name == "renamed-event.ts" ||
            c.name == "version-999" || c.name == "truncated-half" || c.name == "flipped-1" ||
            c.name == "noise" || c.outcome == Outcome::Valid)
            runGui(f.runner, c, out);
    runGui(f.runner, {"good", f.good, Outcome::Valid, ""}, out);
    // No display at all: one line and exit 2, not Qt's abort().
    const std::vector<std::string> noDisplay = {
        "env", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", "-u", "QT_QPA_PLATFORM"};
    auto withoutDisplay = [&](std::vector<std::string> argv) {
        argv.insert(argv.begin(), noDisplay.begin(), noDisplay.end());
        return argv;
    };
    f.runner.run(withoutDisplay({guiBinary(), f.good.string()}), {2}, Output::None, {},
                 "no display");
    f.runner.run(withoutDisplay({hpcprofBinary(), "view", f.good.string()}), {2}, Output::None, {},
                 "no display");
    // A display that is not there: Qt's fatal error becomes the same kind of line.
    f.runner.run(withoutDisplay({"env", "DISPLAY=:97", guiBinary(), f.good.string()}), {2},
                 Output::None, {}, "cannot start");
    // --screenshot needs none.
    const std::string png = (out / "nodisplay.png").string();
    f.runner.run(withoutDisplay({guiBinary(), "--screenshot", png, f.good.string()}), {0},
                 Output::Png, png);
    auto help = f.runner.run(withoutDisplay({guiBinary(), "--help"}), {0});
    CHECK_THAT(help.out, Catch::Contains("--screenshot"));
    ReaderRunner::checkNoLeftovers(f.dir.path());
}

TEST_CASE("hpcprof run shows the files of the profiled program without their control bytes",
          "[robustness][readers]") {
    TempDir dir;
    ReaderRunner runner(dir.path());
    // The program writes a file whose name clears the screen and is not UTF-8; the run's I/O
    // summary lists it.
    const std::string name = (dir.path() / "out\x1b[2J\x07\xff.txt").string();
    auto r = runner.run({hpcprofBinary(), "run", "-o", (dir.path() / "t.hpcprof").string(), "--",
                         "sh", "-c", "printf data > \"$1\"", "sh", name},
                        {0});
    CHECK_THAT(r.err, Catch::Contains("out\\x1B[2J\\x07\\xFF.txt"));
    runner.run({hpcprofBinary(), "report", (dir.path() / "t.hpcprof").string()}, {0}, Output::Text);
    ReaderRunner::checkNoLeftovers(dir.path());
}
