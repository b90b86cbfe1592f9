// SPDX-License-Identifier: MIT
// Bad options and bad HPCPROF_* values with real programs: an option is refused before anything
// runs (exit 2, one line with the option, the value and the accepted range); a bad environment
// value is named once by hpcprof run and the run records exactly what it would with the default.
#include <catch2/catch.hpp>

#include <future>

#include "cli_safety_support.hpp"
#include "process_runner.hpp"

using namespace hpcprof::test;
using namespace hpcprof::test::safety;
namespace fs = std::filesystem;

namespace {

constexpr long kCalls = 60000; // ~3.7 MiB of records per thread: past several 1 MiB chunks

int64_t pwritesTo(const TraceQuery& q, const std::string& file) {
    return q.scalar("SELECT COUNT(*) FROM event_view WHERE name LIKE 'pwrite%' AND bytes = 1"
                    " AND object LIKE '%/" + file + "'");
}

void checkBulkCalls(const TraceQuery& q) {
    CHECK(pwritesTo(q, "bulk-main.dat") == kCalls);
    CHECK(pwritesTo(q, "bulk-thread.dat") == 2 * kCalls);
    CHECK(pwritesTo(q, "bulk-child.dat") == kCalls);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'records_dropped'") == 0);
}

std::vector<std::string> bulk(const TempDir& dir) {
    return {sampleBinary("bulk_sample"), dir.path().string(), std::to_string(kCalls), "2"};
}

} // namespace

TEST_CASE("bad numeric options are refused in one line before anything runs",
          "[integration][safety][settings]") {
    TempDir dir;
    const std::string marker = dir / "ran";
    REQUIRE(runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "ok.hpcprof", "--", "true"})
                .exitCode == 0);
    struct Case {
        std::vector<std::string> args;
        std::string option, value, range;
    };
    std::vector<Case> cases = {
        {{"run", "--counter-period", "-5"}, "--counter-period", "-5", "from 0 to 60000"},
        {{"run", "--counter-period", "1e9"}, "--counter-period", "1e9", "from 0 to 60000"},
        {{"run", "--counter-period", "100000"}, "--counter-period", "100000", "from 0 to 60000"},
        {{"run", "--counter-period", "nan"}, "--counter-period", "nan", "from 0 to 60000"},
        {{"run", "--counter-period", "ten"}, "--counter-period", "ten", "from 0 to 60000"},
        {{"run", "--sources", "io,bogus"}, "--sources", "bogus", "counters, all"},
        {{"run", "--sources", ","}, "--sources", ",", "counters, all"},
    };
    for (auto& c : cases) {
        std::vector<std::string> argv = {hpcprofBinary()};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        argv.insert(argv.end(), {"-o", dir / "t.hpcprof", "--", "touch", marker});
        auto r = runProcess(argv);
        INFO(r.err);
        CHECK(r.exitCode == 2);
        CHECK(lineCount(r.err) == 1);
        CHECK_THAT(r.err, Catch::Contains(c.option));
        CHECK_THAT(r.err, Catch::Contains(c.value));
        CHECK_THAT(r.err, Catch::Contains(c.range));
        CHECK_FALSE(fs::exists(marker));
        CHECK_FALSE(fs::exists(dir / "t.hpcprof.raw"));
    }
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {hpcprofBinary(), "report", dir / "ok.hpcprof", "--link-gbps", "-1"},
             {hpcprofBinary(), "report", dir / "ok.hpcprof", "--link-gbps", "inf"},
             {hpcprofBinary(), "diff", dir / "ok.hpcprof", dir / "ok.hpcprof", "--min-change-pct", "-1"},
             {hpcprofBinary(), "diff", dir / "ok.hpcprof", dir / "ok.hpcprof", "--min-change-ns", "-5"},
             {hpcprofBinary(), "diff", dir / "ok.hpcprof", dir / "ok.hpcprof", "--min-change-window-pct", "101"},
             {hpcprofBinary(), "diff", dir / "ok.hpcprof", dir / "ok.hpcprof", "--min-efficiency-change", "2"}}) {
        auto r = runProcess(argv);
        INFO(r.err);
        CHECK(r.exitCode == 2);
        CHECK(lineCount(r.err) == 1);
        CHECK_THAT(r.err, Catch::Contains(argv[argv.size() - 2]));
        CHECK_THAT(r.err, Catch::Contains("from 0 to"));
        CHECK(r.out.empty()); // no report was written
    }
}

TEST_CASE("every source is named in --help and accepted by --sources, counters included",
          "[integration][safety][settings]") {
    auto help = runProcess({hpcprofBinary(), "run", "--help"});
    CHECK_THAT(help.out, Catch::Contains("io, mpi, socket, rdma, cuda, nvtx, nccl, nccl_plugin, openmp, counters, all"));
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-q", "--sources", "io,counters", "-o",
                         dir / "t.hpcprof", "--", sampleBinary("io_sample"), dir.path()});
    INFO(r.err);
    CHECK(r.exitCode == 0);
    checkIoSampleCalls(TraceQuery(dir / "t.hpcprof"));
}

TEST_CASE("bad HPCPROF_* values are named once and the run records exactly, with the defaults",
          "[integration][safety][settings]") {
    TempDir dir;
    // Each used to be taken as it came: a buffer limit shifted past 64 bits (0: one chunk per
    // thread, the rest dropped), a negative chunk size wrapped to 2^64 - 5 KiB (nothing
    // recorded), a negative counter period cast to a huge one, a rate wrapped to 0.
    const std::vector<std::string> bad = {
        "HPCPROF_THREAD_BUFFER_MB=17592186044416", "HPCPROF_CHUNK_KB=-5",
        "HPCPROF_COUNTER_PERIOD_MS=-5",           "HPCPROF_COUNTER_MIN_GAP_US=-1",
        "HPCPROF_RDMA_EVENT_RATE=4294967296",     "HPCPROF_PROVISION_HELPER=yes",
        "HPCPROF_CLOCK=sundial",                  "HPCPROF_CLOCK_SKEW_NS=12abc",
        "HPCPROF_COUNTER_BOUNDARIES=mpi,bogus",   "HPCPROF_CUDA_API=driver-only",
        "HPCPROF_NCCL_PLUGIN_MASK=-1"};
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--"};
    for (const auto& a : bulk(dir)) argv.push_back(a);
    auto r = runProcess(argv, bad);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "reaped 1\n");
    for (const auto& assignment : bad) {
        std::string variable = assignment.substr(0, assignment.find('='));
        INFO(variable);
        // Once, though three threads and a forked child read it: the agent never prints.
        CHECK(occurrences(r.err, "warning: " + assignment + " is not valid") == 1);
    }
    TraceQuery q(dir / "t.hpcprof");
    checkBulkCalls(q);
}

TEST_CASE("the agent used by hand with bad values records with the defaults and stays silent",
          "[integration][safety][settings]") {
    TempDir dir;
    fs::create_directory(dir / "raw");
    auto r = runProcess(bulk(dir), {"LD_PRELOAD=" + agentLibrary(), "HPCPROF_RAW_DIR=" + (dir / "raw"),
                                    "HPCPROF_CHUNK_KB=-5", "HPCPROF_THREAD_BUFFER_MB=17592186044416"});
    CHECK(r.exitCode == 0);
    CHECK(r.out == "reaped 1\n");
    CHECK(r.err.empty()); // the program's own stderr is left alone
    auto m = runProcess({hpcprofBinary(), "merge", dir / "raw", "-o", dir / "t.hpcprof"});
    INFO(m.err);
    REQUIRE(m.exitCode == 0);
    checkBulkCalls(TraceQuery(dir / "t.hpcprof"));
}

TEST_CASE("in the per-rank form only rank 0's wrapper names a bad value",
          "[integration][safety][settings]") {
    TempDir dir;
    fs::create_directory(dir / "d0");
    fs::create_directory(dir / "d1");
    auto wrapper = [&](int rank) {
        std::vector<std::string> env = {"OMPI_COMM_WORLD_RANK=" + std::to_string(rank),
                                        "OMPI_COMM_WORLD_SIZE=2", "PMIX_NAMESPACE=warnjob",
                                        "HPCPROF_CHUNK_KB=-5"};
        std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof",
                                         "--", sampleBinary("io_sample"),
                                         dir / ("d" + std::to_string(rank))};
        return std::async(std::launch::async, [argv, env] { return runProcess(argv, env); });
    };
    auto w0 = wrapper(0), w1 = wrapper(1);
    auto r0 = w0.get(), r1 = w1.get();
    INFO(r0.err << r1.err);
    REQUIRE(r0.exitCode == 0);
    REQUIRE(r1.exitCode == 0);
    CHECK(occurrences(r0.err, "HPCPROF_CHUNK_KB=-5 is not valid") == 1);
    CHECK(occurrences(r1.err, "HPCPROF_CHUNK_KB") == 0);
    TraceQuery q(dir / "t.hpcprof");
    checkIoSampleCalls(q, "d0");
    checkIoSampleCalls(q, "d1");
}
