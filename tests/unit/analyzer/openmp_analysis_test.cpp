// SPDX-License-Identifier: MIT
// The openmp family's analysis on hand-built traces: busy time per thread and region (implicit
// task minus the waits inside it), the regions' imbalance (max - mean busy), the rule.
#include <catch2/catch.hpp>

#include "families/openmp/openmp_section.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

/// One region instance `seq` over [begin, begin + len) on two threads (main and `worker`): the
/// main thread works `busyMain` then waits, the worker works `busyWorker` then waits.
void region(test::TraceBuilder& b, int main, int worker, int64_t seq, int64_t begin, int64_t len,
            int64_t busyMain, int64_t busyWorker) {
    b.event(main, Category::OmpRegion, "omp_parallel", begin, len).seq = seq;
    auto task = [&](int track, int64_t thread, int64_t busy) {
        auto& t = b.event(track, Category::OmpRegion, "omp_implicit_task", begin, len).withPeer(thread).withDepth(1);
        t.seq = seq;
        if (busy < len)
            b.event(track, Category::OmpSync, "omp_implicit_barrier_wait", begin + busy, len - busy).withDepth(2).seq = seq;
    };
    task(main, 0, busyMain);
    task(worker, 1, busyWorker);
}

} // namespace

TEST_CASE("OpenMP imbalance: per region the slowest thread's busy time above the mean", "[analyzer][openmp]") {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 1'000'000, 2);
    int w0 = b.thread(r0, 101);
    // Region 1 over [0, 100000): main busy 40000, worker 100000 -> mean 70000, imbalance 30000.
    region(b, r0, w0, 1, 0, 100'000, 40'000, 100'000);
    // Region 2 over [200000, 300000): both busy 100000 -> no imbalance.
    region(b, r0, w0, 2, 200'000, 100'000, 100'000, 100'000);
    // Region 3 over [400000, 500000): main 100000, worker 20000 -> mean 60000, imbalance 40000.
    region(b, r0, w0, 3, 400'000, 100'000, 100'000, 20'000);
    test::TempDir dir;
    b.write(dir / "t.hpcprof");
    Analysis a = test::analyseFile(dir / "t.hpcprof");
    const OpenMpSection* omp = openMpSection(a);
    REQUIRE(omp);
    REQUIRE(omp->ranks.size() == 1);
    const OpenMpRank& r = omp->ranks[0];
    CHECK(r.regions == 3);
    CHECK(r.regionNs == 300'000);
    CHECK(r.threads == 2);
    CHECK(r.imbalanceNs == 70'000);
    CHECK(r.worstImbalanceNs == 40'000);
    CHECK(r.worstRegionNs == 100'000);
    // Main waited 60000 (region 1), the worker 80000 (region 3).
    CHECK(r.waitNs == 140'000);
    REQUIRE(r.perThread.size() == 2);
    for (const OpenMpThread& t : r.perThread) {
        INFO("thread " << t.thread);
        CHECK(t.busyNs == (t.thread == 1 ? 220'000 : 240'000));
        CHECK(t.waitNs == (t.thread == 1 ? 80'000 : 60'000));
    }
    // The main thread's wait is sync in its breakdown: 60000 of the 1 ms window.
    CHECK(a.ranks[0].ns(TimeClass::Sync) == 60'000);
    // 70000 of the 1 ms window (7 %) is over the rule's 5 %.
    const Finding* f = test::findFinding(a, "openmp-imbalance");
    REQUIRE(f);
    CHECK(f->estimatedGainNs == 70'000);
    CHECK(f->ranks == std::vector<int64_t>{0});
    CHECK(f->eventIds.size() == 1);
}

TEST_CASE("OpenMP regions whose threads share the work evenly fire no rule", "[analyzer][openmp]") {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 1'000'000, 1);
    int w0 = b.thread(r0, 101);
    region(b, r0, w0, 1, 0, 100'000, 99'000, 100'000); // imbalance 500 ns: 0.05 % of the window
    test::TempDir dir;
    b.write(dir / "t.hpcprof");
    Analysis a = test::analyseFile(dir / "t.hpcprof");
    REQUIRE(openMpSection(a));
    CHECK(openMpSection(a)->ranks[0].imbalanceNs == 500);
    CHECK_FALSE(test::findFinding(a, "openmp-imbalance"));

    test::TraceBuilder none;
    none.rank(0, 0, 1000, 1);
    none.write(dir / "n.hpcprof");
    CHECK_FALSE(openMpSection(test::analyseFile(dir / "n.hpcprof"))); // no OpenMP: no section
}
