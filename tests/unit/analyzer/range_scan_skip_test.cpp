// SPDX-License-Identifier: MIT
// The report reads the step ranges (user and NVTX ranges) in a pass of their own, unless the
// trace's metadata (event_categories) says no event is one. The metadata must name what the
// events are, the skip must not change the analysis, and a row that lies (a trace changed by
// hand) must not change it either: the pass meets the ranges and the analysis reads them.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include "analyzer/src/step_ranges.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/report/report_json.hpp"
#include "process_runner.hpp"
#include "trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

/// 3 ranks, 8 iterations: a read, an Allreduce rank 2 enters late, and (when `ranges`) each
/// iteration inside a "train_step" user range, which makes the steps.
void writeJob(const std::string& path, bool ranges) {
    test::TraceBuilder b;
    constexpr int kRanks = 3;
    for (int r = 0; r < kRanks; ++r) {
        const int main = b.rank(r, 0, 8 * 10'000, kRanks);
        for (int s = 0; s < 8; ++s) {
            const int64_t t = s * 10'000;
            if (ranges) b.event(main, Category::UserRange, "train_step" + std::to_string(s), t, 9'800);
            b.event(main, Category::PosixIo, "read", t + 100, 300).withBytes(4096).withObject("/data/x").withDepth(1);
            const int64_t enter = t + (r == 2 ? 6'000 : 3'000);
            b.event(main, Category::MpiCollective, "MPI_Allreduce", enter, t + 7'000 - enter)
                .collective("world", kRanks, s)
                .withBytes(1 << 20)
                .withDepth(1);
        }
    }
    b.write(path);
}

void exec(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    INFO((error ? error : ""));
    sqlite3_free(error);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

std::string query(const std::string& path, const std::string& sql) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    std::string out = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0)
                          ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0))
                          : "<none>";
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
}

bool rangesRuledOut(const std::string& path) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    return detail::metadataRulesOutRanges(*trace);
}

Analysis analyse(const std::string& path) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto a = analyzeTrace(*trace, AnalysisOptions{});
    INFO(a.status().message());
    REQUIRE(a.ok());
    return std::move(*a);
}

/// The report's JSON without its data-quality warnings and the trace's path.
std::string jsonOf(Analysis a) {
    a.warnings.clear();
    a.tracePath.clear();
    return report::reportJson(a).dump(1);
}

bool warns(const Analysis& a, const std::string& name) {
    for (const auto& w : a.warnings)
        if (w.name == name) return true;
    return false;
}

} // namespace

TEST_CASE("a trace's metadata names the categories of its events, in id order", "[analyzer][ranges]") {
    test::TempDir dir;
    writeJob(dir / "ranges.hpcprof", true);
    writeJob(dir / "plain.hpcprof", false);
    const std::string present = "SELECT group_concat(name, ',') FROM (SELECT name FROM category WHERE id IN"
                                " (SELECT DISTINCT category_id FROM event) ORDER BY id)";
    const std::string row = "SELECT value FROM metadata WHERE key = 'event_categories'";
    CHECK(query(dir / "ranges.hpcprof", row) == query(dir / "ranges.hpcprof", present));
    CHECK(query(dir / "ranges.hpcprof", row) == "posix_io,mpi_collective,user_range");
    CHECK(query(dir / "plain.hpcprof", row) == "posix_io,mpi_collective");
    CHECK_FALSE(rangesRuledOut(dir / "ranges.hpcprof"));
    CHECK(rangesRuledOut(dir / "plain.hpcprof"));
    // Without the row (an older build's trace) or with one this build cannot read, nothing is
    // ruled out.
    exec(dir / "plain.hpcprof", "UPDATE metadata SET value = 'posix_io,no_such_category' WHERE key = 'event_categories'");
    CHECK_FALSE(rangesRuledOut(dir / "plain.hpcprof"));
    exec(dir / "plain.hpcprof", "DELETE FROM metadata WHERE key = 'event_categories'");
    CHECK_FALSE(rangesRuledOut(dir / "plain.hpcprof"));
}

TEST_CASE("skipping the range scan the metadata rules out changes no result", "[analyzer][ranges]") {
    test::TempDir dir;
    writeJob(dir / "plain.hpcprof", false);
    REQUIRE(rangesRuledOut(dir / "plain.hpcprof"));
    const Analysis skipped = analyse(dir / "plain.hpcprof");
    // The collective pattern: a step from each Allreduce to the next.
    CHECK(skipped.steps.source.rfind("collectives", 0) == 0);
    CHECK(skipped.steps.steps.size() == 7);
    CHECK_FALSE(warns(skipped, "event_categories_stale"));
    exec(dir / "plain.hpcprof", "DELETE FROM metadata WHERE key = 'event_categories'");
    REQUIRE_FALSE(rangesRuledOut(dir / "plain.hpcprof"));
    const Analysis scanned = analyse(dir / "plain.hpcprof");
    CHECK(jsonOf(skipped) == jsonOf(scanned));
}

TEST_CASE("a metadata row that leaves out the ranges the events hold is caught by the pass", "[analyzer][ranges]") {
    test::TempDir dir;
    writeJob(dir / "ranges.hpcprof", true);
    const Analysis truth = analyse(dir / "ranges.hpcprof");
    CHECK(truth.steps.source == "range:train_step");
    CHECK(truth.steps.steps.size() == 8);
    CHECK_FALSE(warns(truth, "event_categories_stale"));

    exec(dir / "ranges.hpcprof", "UPDATE metadata SET value = 'posix_io,mpi_collective' WHERE key = 'event_categories'");
    REQUIRE(rangesRuledOut(dir / "ranges.hpcprof"));
    const Analysis again = analyse(dir / "ranges.hpcprof");
    CHECK(again.steps.source == "range:train_step");
    CHECK(warns(again, "event_categories_stale"));
    CHECK(jsonOf(again) == jsonOf(truth));
}
