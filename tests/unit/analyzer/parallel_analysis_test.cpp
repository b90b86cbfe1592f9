// SPDX-License-Identifier: MIT
// The per-rank pass runs on worker threads: the analysis (and so every report) must be the same
// for any number of workers, including more workers than ranks.
#include <catch2/catch.hpp>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/report/report_json.hpp"
#include "process_runner.hpp"
#include "trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

/// 6 ranks, 20 steps: a ProfilerStep range, a file read, ring send/recv with tags, an Allreduce
/// that rank 4 enters late; ranks 0-2 also have a GPU stream with kernels and a pageable copy.
test::TraceBuilder job() {
    test::TraceBuilder b;
    constexpr int kRanks = 6;
    int main[kRanks];
    for (int r = 0; r < kRanks; ++r) main[r] = b.rank(r, 0, 20 * 10'000, kRanks);
    for (int r = 0; r < kRanks; ++r) {
        int gpu = r < 3 ? b.gpuStream(main[r], 0, 7) : -1;
        for (int s = 0; s < 20; ++s) {
            const int64_t t = s * 10'000;
            b.event(main[r], Category::UserRange, "ProfilerStep#" + std::to_string(s), t, 9'900);
            b.event(main[r], Category::PosixIo, "read", t + 100, 300 + 10 * r).withBytes(4096).withObject("/data/x").withDepth(1);
            b.event(main[r], Category::MpiP2p, "MPI_Send", t + 1'000, 200).withPeer((r + 1) % kRanks).withTag(s % 3).withBytes(100).withDepth(1);
            b.event(main[r], Category::MpiP2p, "MPI_Recv", t + 1'100 + 50 * r, 400).withPeer((r + kRanks - 1) % kRanks).withTag(s % 3).withBytes(100).withDepth(1);
            const int64_t enter = t + (r == 4 ? 6'000 : 4'000);
            b.event(main[r], Category::MpiCollective, "MPI_Allreduce", enter, t + 7'000 - enter)
                .collective("world", kRanks, s)
                .withBytes(2 << 20)
                .withDepth(1);
            if (gpu >= 0) {
                b.event(gpu, Category::GpuMemcpy, "Memcpy HtoD", t + 500, 300).withBytes(1 << 20).withArg("src_kind", "pageable");
                b.event(gpu, Category::GpuKernel, "volta_sgemm_128x64_nn", t + 1'000, 2'000);
                b.event(gpu, Category::GpuKernel, "elementwise_kernel", t + 3'500, 5);
            }
        }
    }
    return b;
}

std::string analyseToJson(const std::string& path, int threads) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    AnalysisOptions o;
    o.threads = threads;
    auto a = analyzeTrace(*trace, o);
    INFO(a.status().message());
    REQUIRE(a.ok());
    // Facts that only the per-rank pass produces, so a pass that lost ranks cannot pass.
    CHECK(a->summary.events == 6 * 20 * 5 + 3 * 20 * 3);
    CHECK(a->waits.completeInstances == 20);
    CHECK(a->waits.collectiveWaitNs == 5 * 20 * 2'000);
    CHECK(a->waits.matchedMessages == 6 * 20);
    CHECK(a->steps.steps.size() == 20);
    CHECK(a->ranks.at(0).facts.pageableCopies == 20);
    CHECK(a->ranks.at(0).facts.examples.at("pageable_copy").size() == 3);
    CHECK(a->ranks.at(5).facts.smallIoCalls == 20);
    return report::reportJson(*a).dump(1);
}

} // namespace

TEST_CASE("the analysis is identical with 1, 2, 3 and 16 worker threads", "[analyzer][parallel]") {
    test::TempDir dir;
    job().write(dir / "job.hpcprof");
    const std::string serial = analyseToJson(dir / "job.hpcprof", 1);
    for (int threads : {2, 3, 16, 0}) {
        INFO("threads " << threads);
        CHECK(analyseToJson(dir / "job.hpcprof", threads) == serial);
    }
}
