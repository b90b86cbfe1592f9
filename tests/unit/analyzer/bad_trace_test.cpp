// SPDX-License-Identifier: MIT
// Bad traces: a clear error for files that are not readable traces, and a result with a
// data-quality warning (never a crash) for traces with negative durations or unsorted events.
#include <catch2/catch.hpp>

#include <fstream>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {
const DataWarning* findWarning(const Analysis& a, const std::string& name) {
    for (const auto& w : a.warnings)
        if (w.name == name) return &w;
    return nullptr;
}
} // namespace

TEST_CASE("files that are not readable traces give a clear error", "[analyzer][bad]") {
    test::TempDir dir;
    { std::ofstream(dir / "text.hpcprof") << "this is not sqlite\n"; }
    { std::ofstream(dir / "empty.hpcprof"); }
    auto text = Trace::open(dir / "text.hpcprof");
    REQUIRE_FALSE(text.ok());
    CHECK_THAT(text.status().message(), Catch::Contains("not an hpcprof trace"));
    auto empty = Trace::open(dir / "empty.hpcprof");
    REQUIRE_FALSE(empty.ok());
    CHECK_THAT(empty.status().message(), Catch::Contains("empty"));

    // Another schema version.
    test::TraceBuilder b;
    int t = b.rank(0, 0, 100, 1);
    b.event(t, Category::PosixIo, "read", 10, 10);
    b.write(dir / "v.hpcprof");
    {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open((dir / "v.hpcprof").c_str(), &db) == SQLITE_OK);
        REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 999", nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
    }
    auto v = Trace::open(dir / "v.hpcprof");
    REQUIRE_FALSE(v.ok());
    CHECK_THAT(v.status().message(), Catch::Contains("version 999"));

    // Truncated copy.
    b.write(dir / "full.hpcprof");
    {
        std::ifstream in(dir / "full.hpcprof", std::ios::binary);
        std::string data((std::istreambuf_iterator<char>(in)), {});
        std::ofstream(dir / "cut.hpcprof", std::ios::binary) << data.substr(0, data.size() / 2);
    }
    auto cut = Trace::open(dir / "cut.hpcprof");
    REQUIRE_FALSE(cut.ok());
    CHECK_THAT(cut.status().message(), Catch::Contains("truncated"));
}

TEST_CASE("a trace without processes is an error, not a crash", "[analyzer][bad]") {
    test::TempDir dir;
    test::TraceBuilder b;
    b.write(dir / "none.hpcprof");
    auto t = Trace::open(dir / "none.hpcprof");
    REQUIRE(t.ok());
    auto a = analyzeTrace(*t);
    REQUIRE_FALSE(a.ok());
    CHECK_THAT(a.status().message(), Catch::Contains("no processes"));
}

TEST_CASE("negative durations and unsorted events give a result with data-quality warnings",
          "[analyzer][bad]") {
    test::TempDir dir;
    test::TraceBuilder b;
    b.keepInsertionOrder();
    int t = b.rank(0, 0, 100, 1);
    b.event(t, Category::PosixIo, "read", 50, 10);
    b.event(t, Category::PosixIo, "read", 10, 10); // out of order
    b.event(t, Category::PosixIo, "write", 70, -5); // negative duration
    b.write(dir / "bad.hpcprof");
    auto trace = Trace::open(dir / "bad.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzeTrace(*trace);
    REQUIRE(a.ok());
    const DataWarning* unsorted = findWarning(*a, "unsorted_events");
    const DataWarning* negative = findWarning(*a, "negative_durations_read");
    REQUIRE(unsorted);
    CHECK(unsorted->count == 1);
    REQUIRE(negative);
    CHECK(negative->count == 1);
    // The attribution still sorts: two reads of 10 ns each, the negative write counts nothing.
    CHECK(a->ranks[0].ns(TimeClass::Io) == 20);
    CHECK(a->ranks[0].ns(TimeClass::Compute) == 80);
}

TEST_CASE("a window outside the trace or an unknown range name is a clear error", "[analyzer][bad]") {
    test::TempDir dir;
    test::TraceBuilder b;
    int t = b.rank(0, 0, 100, 1);
    b.event(t, Category::PosixIo, "read", 10, 10);
    b.write(dir / "w.hpcprof");
    auto trace = Trace::open(dir / "w.hpcprof");
    REQUIRE(trace.ok());
    AnalysisOptions o;
    o.window = *parseWindow("1000:2000");
    auto outside = analyzeTrace(*trace, o);
    REQUIRE_FALSE(outside.ok());
    CHECK_THAT(outside.status().message(), Catch::Contains("does not overlap"));
    o.window = *parseWindow("range:NoSuchStep*");
    auto noRange = analyzeTrace(*trace, o);
    REQUIRE_FALSE(noRange.ok());
    CHECK_THAT(noRange.status().message(), Catch::Contains("NoSuchStep"));
}
