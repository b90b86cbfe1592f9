// SPDX-License-Identifier: MIT
// The NVTX sample under `hpcprof run`: exactly the ranges, marks, domains, categories and
// payloads it emitted, from the executable and from its shared library, nested per thread.
#include <catch2/catch.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

ProcessResult profileNvtx(const TempDir& dir, const std::string& sources, const std::string& code) {
    return runProcess({hpcprofBinary(), "run", "-q", "--sources", sources, "-o",
                       dir / "trace.hpcprof", "--", sampleBinary("nvtx_sample"), code});
}

const char* kRowsSql =
    "SELECT e.name, e.depth,"
    " COALESCE((SELECT value FROM event_arg WHERE event_id = e.event_id AND key = 'domain'), ''),"
    " COALESCE((SELECT value FROM event_arg WHERE event_id = e.event_id AND key = 'nvtx_category'), ''),"
    " COALESCE((SELECT value FROM event_arg WHERE event_id = e.event_id AND key = 'payload'), ''),"
    " COALESCE((SELECT value FROM event_arg WHERE event_id = e.event_id AND key = 'color'), '')"
    " FROM event_view e WHERE e.category = 'nvtx' AND ";

} // namespace

TEST_CASE("NVTX ranges from the executable and a shared library are recorded exactly, nested per thread",
          "[integration][gpu][nvtx]") {
    TempDir dir;
    auto r = profileNvtx(dir, "all", "7");
    INFO(r.err);
    REQUIRE(r.exitCode == 7); // the sample's own exit code passes through
    TraceQuery q(dir / "trace.hpcprof");

    auto mainRows = q.rows(std::string(kRowsSql) + "e.tid = e.pid ORDER BY e.ts_ns, e.depth");
    std::vector<std::string> expectedMain = {
        "outer|0||||",
        "begin|1||||",
        "lib_compute|1|libuser|libcat|40|",
        "lib_registered|2|libuser|||",
        "lib_compute|1|libuser|libcat|41|",
        "lib_registered|2|libuser|||",
        "inner|1||io_phase||4278255360",
        "wide_\xc3\xbc|1||||",
        "async|0||||",
        "never_closed|0||||",
    };
    CHECK(mainRows == expectedMain);

    auto workerRows = q.rows(std::string(kRowsSql) + "e.tid <> e.pid ORDER BY e.ts_ns, e.depth");
    std::vector<std::string> expectedWorker = {
        "worker|0||||", "worker_inner|1||||", "worker|0||||",
        "worker_inner|1||||", "worker|0||||", "worker_inner|1||||",
    };
    CHECK(workerRows == expectedWorker);

    // Marks are instants; ranges contain what they enclose.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE category = 'nvtx' AND name IN "
                   "('begin', 'lib_registered') AND dur_ns <> 0") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view o JOIN event_view i ON i.track_id = o.track_id"
                   " WHERE o.name = 'outer' AND i.name = 'inner' AND i.ts_ns >= o.ts_ns"
                   " AND i.ts_ns + i.dur_ns <= o.ts_ns + o.dur_ns") == 1);
    // The range started on the main thread and ended by the worker spans the worker's ranges.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view a, event_view w WHERE a.name = 'async'"
                   " AND w.name = 'worker' AND w.ts_ns >= a.ts_ns"
                   " AND w.ts_ns + w.dur_ns <= a.ts_ns + a.dur_ns") == 3);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'nvtx_unbalanced_pops'") == 1);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'nvtx_unclosed_ranges'") == 1);
}

TEST_CASE("NVTX is not injected when the nvtx source is not selected", "[integration][gpu][nvtx]") {
    TempDir dir;
    auto r = profileNvtx(dir, "io", "0");
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE category = 'nvtx'") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM process") == 1);
}

TEST_CASE("CPU counters are sampled at NVTX range boundaries when asked for", "[integration][gpu][nvtx]") {
    TempDir on, off;
    auto run = [](const TempDir& dir, std::vector<std::string> env) {
        env.push_back("HPCPROF_COUNTER_PERIOD_MS=0"); // boundaries, start and exit only
        env.push_back("HPCPROF_COUNTER_MIN_GAP_US=0"); // every boundary, however close
        return runProcess({hpcprofBinary(), "run", "-q", "--sources", "nvtx,counters", "--counters",
                           "task_clock", "-o", dir / "trace.hpcprof", "--", sampleBinary("nvtx_sample")},
                          env);
    };
    REQUIRE(run(on, {"HPCPROF_COUNTER_BOUNDARIES=nvtx"}).exitCode == 0);
    REQUIRE(run(off, {}).exitCode == 0);
    TraceQuery q(on / "trace.hpcprof"), q0(off / "trace.hpcprof");
    // Main thread: 13 push/pop/start calls (outer, 2 library ranges, inner, wide, the unbalanced
    // pop, async start, never_closed) plus the start and exit samples. Worker: 3 x 4 push/pop
    // plus the end of "async", and up to two more (a baseline read when it is first attached,
    // a last read after it ended, depending on when the sampler thread saw it).
    int64_t mainSamples = q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid");
    int64_t workerSamples = q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid != pid");
    CHECK(mainSamples >= 15);
    CHECK(mainSamples <= 16);
    CHECK(workerSamples >= 13);
    CHECK(workerSamples <= 16);
    // By default NVTX ranges are not sampled (they can be too fine-grained).
    CHECK(q0.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock'") <= 4);
}
