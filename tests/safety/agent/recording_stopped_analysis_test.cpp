// SPDX-License-Identifier: MIT
// A rank whose reference thread stopped recording (full disk) is analysed up to that moment: the
// unknown rest is not called compute, and every report says so. Hand-computed breakdowns.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/report/writers.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

Analysis analyze(const test::TraceBuilder& b, const std::string& path) {
    b.write(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto a = analyzeTrace(*trace);
    INFO(a.status().message());
    REQUIRE(a.ok());
    return std::move(a.value());
}

// Two CPU ranks over [0, 1000):
//   rank 0 main: read [100, 200), stopped recording at 400 (disk full)
//   rank 0 helper thread: read [500, 600) (recorded before it too stopped, at 700)
//   rank 1 main: read [100, 300), recorded to the end
test::TraceBuilder stoppedRank() {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 1000, 2);
    int helper = b.thread(r0, 7000);
    int r1 = b.rank(1, 0, 1000, 2);
    b.event(r0, Category::PosixIo, "read", 100, 100).withBytes(10).withObject("/in");
    b.event(helper, Category::PosixIo, "read", 500, 100).withBytes(10).withObject("/in");
    b.event(r1, Category::PosixIo, "read", 100, 200).withBytes(10).withObject("/in");
    b.stopRecording(r0, 400);
    b.stopRecording(helper, 700);
    return b;
}

} // namespace

TEST_CASE("a rank whose main thread stopped recording is analysed up to the stop only",
          "[analyzer][recording_stopped]") {
    test::TempDir dir;
    Analysis a = analyze(stoppedRank(), dir / "t.hpcprof");
    REQUIRE(a.ranks.size() == 2);
    const RankBreakdown& r0 = a.ranks[0];
    // Window [0, 400): read 100 ns, the other 300 ns compute; [400, 1000) is not counted at all.
    CHECK(r0.windowNs == 400);
    CHECK(r0.ns(TimeClass::Io) == 100);
    CHECK(r0.ns(TimeClass::Compute) == 300);
    CHECK(r0.ns(TimeClass::Idle) == 0);
    REQUIRE(r0.recordingStoppedTs);
    CHECK(*r0.recordingStoppedTs == 400);
    CHECK(r0.stopReason == "disk_full");
    // Rank 1 recorded to the end: its whole window.
    const RankBreakdown& r1 = a.ranks[1];
    CHECK(r1.windowNs == 1000);
    CHECK(r1.ns(TimeClass::Compute) == 800);
    CHECK_FALSE(r1.recordingStoppedTs);
    CHECK(a.summary.totalNs == 1400);
    bool warned = false;
    for (const auto& w : a.warnings)
        if (w.name == "ranks_stopped_recording") warned = w.count == 1;
    CHECK(warned);
}

TEST_CASE("a helper thread that stopped recording does not end its rank's window",
          "[analyzer][recording_stopped]") {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 1000, 1);
    int helper = b.thread(r0, 7000);
    b.event(r0, Category::PosixIo, "read", 100, 100).withBytes(10).withObject("/in");
    b.event(helper, Category::PosixIo, "read", 500, 100).withBytes(10).withObject("/in");
    b.stopRecording(helper, 550);
    test::TempDir dir;
    Analysis a = analyze(b, dir / "t.hpcprof");
    REQUIRE(a.ranks.size() == 1);
    // The breakdown stands on the main thread, recorded to the end.
    CHECK(a.ranks[0].windowNs == 1000);
    CHECK(a.ranks[0].ns(TimeClass::Compute) == 900);
    CHECK_FALSE(a.ranks[0].recordingStoppedTs);
}

TEST_CASE("every report says which ranks stopped recording and when",
          "[analyzer][report][recording_stopped]") {
    test::TempDir dir;
    Analysis a = analyze(stoppedRank(), dir / "t.hpcprof");
    using report::Format;
    CHECK_THAT(report::writeReport(Format::Text, a, {}),
               Catch::Contains("RECORDING STOPPED: rank 0 at 400 ns (disk_full); each of these "
                               "ranks is analysed up to that moment only") &&
                   Catch::Contains("ranks_stopped_recording = 1"));
    CHECK_THAT(report::writeReport(Format::Markdown, a, {}),
               Catch::Contains("**Recording stopped**: rank 0 at 400 ns (disk\\_full)"));
    CHECK_THAT(report::writeReport(Format::Html, a, {}),
               Catch::Contains("<strong>Recording stopped</strong>: rank 0 at 400 ns (disk_full)"));
    auto j = nlohmann::json::parse(report::writeReport(Format::Json, a, {}));
    CHECK(j["ranks"][0]["recording_stopped_ns"] == 400);
    CHECK(j["ranks"][0]["stop_reason"] == "disk_full");
    CHECK(j["ranks"][0]["window_ns"] == 400);
    CHECK_FALSE(j["ranks"][1].contains("recording_stopped_ns"));
}
