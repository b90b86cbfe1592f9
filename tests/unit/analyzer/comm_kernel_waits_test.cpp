// SPDX-License-Identifier: MIT
// Communication kernels without a collective instance (NCCL SendRecv kernels in a profiler trace)
// matched across ranks by when they end (issue 20, point 4): the late rank is the straggler, its
// waits are counted, each step gets its straggler and each rank step the place where its last
// long communication kernel starts. Times in microseconds x 1000; the numbers are worked out in
// the comments.
#include <catch2/catch.hpp>

#include "tests/unit/analyzer/analysis_helpers.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

constexpr int64_t us = 1000;

/// Ranks 0 and 1 over [0, 2000 us], steps ProfilerStep#1 [0, 1000 us] and #2 [1000, 2000 us].
/// SendRecv kernels: rank 0 A [100, 300] (its partner is not in the trace), B [400, 700],
/// C [1200, 1500]; rank 1 B [600, 700], C [1250, 1500]. B and C end together on both ranks: two
/// instances, rank 1 entering last in both; rank 0 waits 200 us in B and 50 us in C.
void build(test::TraceBuilder& b) {
    for (int r = 0; r < 2; ++r) {
        int t = b.rank(r, 0, 2000 * us, 2);
        b.event(t, Category::UserRange, "ProfilerStep#1", 0, 1000 * us);
        b.event(t, Category::UserRange, "ProfilerStep#2", 1000 * us, 1000 * us);
        int g = b.gpuStream(t, 0, 7);
        auto kernel = [&](int64_t begin, int64_t end) {
            b.event(g, Category::GpuCommKernel, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", begin * us,
                    (end - begin) * us);
        };
        if (r == 0) {
            kernel(100, 300);
            kernel(400, 700);
            kernel(1200, 1500);
        } else {
            kernel(600, 700);
            kernel(1250, 1500);
        }
    }
}

} // namespace

TEST_CASE("communication kernels are matched across ranks by when they end", "[analyzer][gpu][waits]") {
    Analysis a = test::analyseBuilt(build);
    CHECK(a.waits.completeInstances == 2);
    CHECK(a.waits.incompleteInstances == 0);
    CHECK(a.waits.collectiveWaitNs == 250 * us);
    REQUIRE(a.waits.stragglers.size() == 1);
    CHECK(a.waits.stragglers[0].rank == 1);
    CHECK(a.waits.stragglers[0].timesLast == 2);
    CHECK(a.waits.stragglers[0].inflictedWaitNs == 250 * us);

    REQUIRE(a.steps.steps.size() == 2);
    CHECK(a.steps.steps[0].stragglerRank == 1);
    CHECK(a.steps.steps[0].stragglerWaitNs == 200 * us);
    CHECK(a.steps.steps[1].stragglerRank == 1);
    CHECK(a.steps.steps[1].stragglerWaitNs == 50 * us);

    // Where the last long communication kernel starts in each rank's step.
    REQUIRE(a.steps.ranks.size() == 2);
    CHECK(a.steps.ranks[0].steps[0].commStartFraction == Approx(0.40));
    CHECK(a.steps.ranks[1].steps[0].commStartFraction == Approx(0.60));
    CHECK(a.steps.ranks[0].steps[1].commStartFraction == Approx(0.20));
    CHECK(a.steps.ranks[1].steps[1].commStartFraction == Approx(0.25));

    // The straggler rule names rank 1.
    const Finding* f = test::findFinding(a, "straggler");
    REQUIRE(f);
    CHECK(f->ranks == std::vector<int64_t>{1});
}

TEST_CASE("communication kernels that end apart are not one exchange", "[analyzer][gpu][waits]") {
    Analysis a = test::analyseBuilt([](test::TraceBuilder& b) {
        for (int r = 0; r < 2; ++r) {
            int t = b.rank(r, 0, 2000 * us, 2);
            int g = b.gpuStream(t, 0, 7);
            // Ends 100 us apart on kernels of 300 us: beyond max(50 us, 2 %).
            b.event(g, Category::GpuCommKernel, "ncclKernel_SendRecv", (400 + 100 * r) * us, 300 * us);
        }
    });
    CHECK(a.waits.completeInstances == 0);
    CHECK(a.waits.stragglers.empty());
}
