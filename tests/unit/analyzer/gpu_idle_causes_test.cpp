// SPDX-License-Identifier: MIT
// Why the GPU idles (issue 20, point 3): a hand-built GPU rank whose idle time has one stretch of
// each cause, with the expected split worked out below; the split sums to the idle total, the
// priority of causes holds (work queued on the GPU wins over the host's state), per-step totals
// and the two rules that read the split.
#include <catch2/catch.hpp>

#include <functional>

#include "families/gpu/gpu_idle_section.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

Analysis run(const std::function<void(test::TraceBuilder&)>& build) { return test::analyseBuilt(build); }

int64_t cause(const std::array<int64_t, kGpuIdleCauseCount>& c, GpuIdleCause k) { return c[size_t(k)]; }

/// Rank 0 alive over [0, 10000], one GPU stream. Kernels (correlation id): A [100, 1000] (1),
/// B [2000, 3000] (2), C [5000, 6000] (3), D [8000, 10000] (4). GPU idle: [0, 100], [1000, 2000],
/// [3000, 5000], [6000, 8000] = 5100.
///   [0, 50]      launch A (API call)                  launch       50
///   [50, 100]    A launched, not started              kernel_wait  50
///   [1000, 1600] the data loader's __next__ range     input       600
///   [1600, 1700] launch B                             launch      100
///   [1700, 2000] B launched, not started              kernel_wait 300
///   [3000, 3500] poll on a pipe                       input       500
///   [3500, 4000] recv on a socket                     communication 500
///   [4000, 4200] cudaDeviceSynchronize                sync        200
///   [4200, 4400] cudaMemcpy (blocking)                memcpy      200
///   [4400, 4900] nothing recorded: host computing     host        500
///   [4900, 5000] launch C                             launch      100
///   [6000, 7000] host computing                       host       1000
///   [7000, 7100] launch D                             launch      100
///   [7100, 8000] D launched, not started (a poll at [7500, 7800] too: the queued work wins)
///                                                     kernel_wait 900
/// Steps ProfilerStep#1 [0, 5000] and ProfilerStep#2 [5000, 10000].
void buildRank(test::TraceBuilder& b, bool loader) {
    int t = b.rank(0, 0, 10000, 1);
    int g = b.gpuStream(t, 0, 7);
    b.event(t, Category::UserRange, "ProfilerStep#1", 0, 5000);
    b.event(t, Category::UserRange, "ProfilerStep#2", 5000, 5000);
    auto launch = [&](int64_t ts, int64_t dur, int64_t corr) {
        b.event(t, Category::CudaApi, "cudaLaunchKernel", ts, dur).withDepth(1).correlationId = corr;
    };
    auto kernel = [&](const char* name, int64_t ts, int64_t dur, int64_t corr) {
        b.event(g, Category::GpuKernel, name, ts, dur).correlationId = corr;
    };
    launch(0, 50, 1);
    kernel("kernel_a", 100, 900, 1);
    if (loader) b.event(t, Category::CpuOp, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 1000, 600).withDepth(1);
    launch(1600, 100, 2);
    kernel("kernel_b", 2000, 1000, 2);
    if (loader) b.event(t, Category::FdWait, "poll", 3000, 500).withDepth(1).withObject("pipe:[77]");
    b.event(t, Category::Socket, "recv", 3500, 500).withDepth(1).withBytes(64).withObject("socket:[5]");
    b.event(t, Category::CudaApi, "cudaDeviceSynchronize", 4000, 200).withDepth(1);
    b.event(t, Category::CudaApi, "cudaMemcpy", 4200, 200).withDepth(1);
    launch(4900, 100, 3);
    kernel("kernel_c", 5000, 1000, 3);
    launch(7000, 100, 4);
    b.event(t, Category::FdWait, "poll", 7500, 300).withDepth(1).withObject("pipe:[77]");
    kernel("kernel_d", 8000, 2000, 4);
}

} // namespace

TEST_CASE("GPU idle time is split by cause, the split sums to the idle total", "[analyzer][gpu]") {
    Analysis a = run([](test::TraceBuilder& b) { buildRank(b, true); });
    REQUIRE(a.ranks.size() == 1);
    CHECK(a.ranks[0].gpuIdleNs == 5100);
    const GpuIdleSection* g = gpuIdleSection(a);
    REQUIRE(g);
    REQUIRE(g->ranks.size() == 1);
    const auto& c = g->ranks[0].byCause;
    CHECK(g->ranks[0].idleNs == 5100);
    CHECK(cause(c, GpuIdleCause::KernelWait) == 1250);
    CHECK(cause(c, GpuIdleCause::Input) == 1100);
    CHECK(cause(c, GpuIdleCause::Communication) == 500);
    CHECK(cause(c, GpuIdleCause::Sync) == 200);
    CHECK(cause(c, GpuIdleCause::Memcpy) == 200);
    CHECK(cause(c, GpuIdleCause::Launch) == 350);
    CHECK(cause(c, GpuIdleCause::Host) == 1500);
    // The longest gaps first, each named by the cause of most of it.
    REQUIRE(g->ranks[0].longestGaps.size() == 4);
    CHECK(g->ranks[0].longestGaps[0].begin == 3000); // [3000, 5000]: input 500 + host 500 tie -> input first
    CHECK(g->ranks[0].longestGaps[0].cause == GpuIdleCause::Input);
    CHECK(g->ranks[0].longestGaps[1].begin == 6000); // [6000, 8000]: host 1000 of 2000
    CHECK(g->ranks[0].longestGaps[1].cause == GpuIdleCause::Host);

    // Per step: step 0 [0, 5000] holds 3100 of the idle time, step 1 [5000, 10000] 2000.
    REQUIRE(a.steps.steps.size() == 2);
    REQUIRE(g->steps.size() == 2);
    CHECK(g->steps[0].idleNs == 3100);
    CHECK(cause(g->steps[0].byCause, GpuIdleCause::Input) == 1100);
    CHECK(cause(g->steps[0].byCause, GpuIdleCause::KernelWait) == 350);
    CHECK(g->steps[1].idleNs == 2000);
    CHECK(cause(g->steps[1].byCause, GpuIdleCause::KernelWait) == 900);
    CHECK(cause(g->steps[1].byCause, GpuIdleCause::Host) == 1000);

    // 1100 of 10000 active is input (>= 10 %): the GPU waits for its data; host + launch
    // (1850, 18.5 %) is under the host-bound threshold (20 %).
    const Finding* input = test::findFinding(a, "gpu-waits-for-input");
    REQUIRE(input);
    CHECK(input->estimatedGainNs == 1100);
    CHECK(test::findingEvidence(*input, "input_wait_pct_of_active") == Approx(11.0));
    CHECK(test::findingEvidence(*input, "input_wait_pct_of_steps") == Approx(11.0));
    CHECK_FALSE(test::findFinding(a, "gpu-host-bound"));
}

TEST_CASE("without a data loader the same gaps are the host's, and no input finding", "[analyzer][gpu]") {
    Analysis a = run([](test::TraceBuilder& b) { buildRank(b, false); });
    const GpuIdleSection* g = gpuIdleSection(a);
    REQUIRE(g);
    const auto& c = g->ranks[0].byCause;
    CHECK(cause(c, GpuIdleCause::Input) == 0);
    CHECK(cause(c, GpuIdleCause::Host) == 1500 + 600 + 500);
    int64_t sum = 0;
    for (int64_t v : c) sum += v;
    CHECK(sum == 5100);
    CHECK_FALSE(test::findFinding(a, "gpu-waits-for-input"));
    // Host + launch = 2600 + 350 = 29.5 % of the active time: host-bound.
    const Finding* host = test::findFinding(a, "gpu-host-bound");
    REQUIRE(host);
    CHECK(host->estimatedGainNs == 2950);
}

TEST_CASE("a rank without a GPU has no idle-cause section", "[analyzer][gpu]") {
    Analysis a = run([](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 1000, 1);
        b.event(t, Category::FdWait, "poll", 100, 300).withObject("pipe:[1]");
    });
    CHECK_FALSE(gpuIdleSection(a));
}
