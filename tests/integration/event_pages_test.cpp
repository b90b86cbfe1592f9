// SPDX-License-Identifier: MIT
// The conversion's event rows written below SQL (store/event_pages.hpp) against the same
// conversion through INSERTs, on real captures kept with `hpcprof run --keep-raw`: the I/O sample
// (several processes and threads, positioned calls with offsets) and, where Open MPI is installed, the non-blocking halo exchange (message tags in
// event_detail, completions naming their posting calls). Every table of the two traces, the
// statistics of ANALYZE included, must hold the same rows (rowids, values and their types), and
// the paged trace must pass SQLite's integrity check.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <filesystem>

#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/store/merge.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

/// Every row of every table of `path`, each value with its type ("i:5", "t:name", "n").
std::vector<std::string> dump(const std::string& path) {
    TraceQuery q(path);
    std::vector<std::string> out;
    for (const auto& table : q.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")) {
        schema::Statement st(q.db(), "SELECT * FROM \"" + table + "\"");
        while (st.step()) {
            std::string row = table;
            for (int c = 0; c < sqlite3_column_count(st.get()); ++c) {
                const int type = sqlite3_column_type(st.get(), c);
                row += type == SQLITE_NULL ? "|n" : "|" + std::to_string(type) + ":" + st.text(c);
            }
            out.push_back(std::move(row));
        }
        REQUIRE(st.error().ok());
    }
    return out;
}

/// The kept raw folder of `trace` converted twice, with the event rows packed into pages and
/// through SQL; both traces' rows compared. Returns the number of event rows.
int64_t compareConversions(const TempDir& dir, const std::string& trace) {
    store::MergeOptions o;
    o.rawDir = trace + ".raw";
    REQUIRE(fs::is_directory(o.rawDir));
    o.output = dir / "pages.hpcprof";
    REQUIRE(store::mergeRawDirectory(o).ok());
    o.output = dir / "sql.hpcprof";
    o.eventPages = false;
    REQUIRE(store::mergeRawDirectory(o).ok());
    TraceQuery pages(dir / "pages.hpcprof");
    CHECK(pages.text("PRAGMA integrity_check") == "ok");
    const auto a = dump(dir / "pages.hpcprof"), b = dump(dir / "sql.hpcprof");
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        INFO("row " << i);
        REQUIRE(a[i] == b[i]);
    }
    CHECK(pages.scalar("SELECT stat FROM sqlite_stat1 WHERE tbl = 'event'") == pages.scalar("SELECT COUNT(*) FROM event"));
    return pages.scalar("SELECT COUNT(*) FROM event");
}

} // namespace

TEST_CASE("the I/O sample's events packed into pages are the rows the INSERTs give", "[store][pages]") {
    TempDir dir;
    const std::string trace = dir / "trace.hpcprof";
    auto r = runProcess({hpcprofBinary(), "run", "-q", "--keep-raw", "-o", trace, "--", sampleBinary("io_sample"),
                         dir.path().string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(compareConversions(dir, trace) >= 45);
    TraceQuery q(dir / "pages.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event WHERE offset IS NOT NULL") == 3); // pwrite x2, pread
}

TEST_CASE("an MPI halo exchange's events, tags and completions packed into pages are the SQL rows",
          "[store][pages][mpi]") {
    if (!haveMpirun() || !fs::exists(sampleBinary("mpi_halo"))) {
        WARN("SKIPPED: no mpirun or no mpi_halo sample in this build");
        return;
    }
    TempDir dir;
    const std::string trace = dir / "trace.hpcprof";
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "--keep-raw", "-o", trace, "--",
                                     "mpirun", "-np", "4", sampleBinary("mpi_halo")};
    auto r = runProcess(argv, kMpiTestEnv);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(compareConversions(dir, trace) > 100);
    TraceQuery q(dir / "pages.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_detail WHERE tag IS NOT NULL") > 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM mpi_completion") > 0);
}
