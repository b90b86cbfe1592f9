// SPDX-License-Identifier: MIT
// Golden tests: tiny hand-built traces whose breakdown, POP metrics and wait states were
// computed by hand (the arithmetic is in the comments); the analyzer must match exactly.
#include <catch2/catch.hpp>

#include "hpcprof/analyzer/analyze.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

Analysis analyze(const test::TraceBuilder& b, const std::string& path, const AnalysisOptions& o = {}) {
    b.write(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto a = analyzeTrace(*trace, o);
    INFO(a.status().message());
    REQUIRE(a.ok());
    return std::move(a.value());
}

// Two CPU ranks over [0, 100):
//   rank 0 main:   Allreduce#0 [10,30)   read [50,60)      helper thread: read [35,45)
//   rank 1 main:   Allreduce#0 [25,30)
test::TraceBuilder cpuTwoRanks() {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 100, 2);
    int r0helper = b.thread(r0, 5000);
    int r1 = b.rank(1, 0, 100, 2);
    b.event(r0, Category::MpiCollective, "MPI_Allreduce", 10, 20).collective("world", 2, 0).withBytes(8);
    b.event(r0, Category::PosixIo, "read", 50, 10).withBytes(100).withObject("/data/in.dat");
    b.event(r0helper, Category::PosixIo, "read", 35, 10).withBytes(100).withObject("/data/in.dat");
    b.event(r1, Category::MpiCollective, "MPI_Allreduce", 25, 5).collective("world", 2, 0).withBytes(8);
    return b;
}

} // namespace

TEST_CASE("CPU ranks: the breakdown, wait states and POP metrics match the hand computation",
          "[golden][analyzer]") {
    test::TempDir dir;
    Analysis a = analyze(cpuTwoRanks(), dir / "cpu.hpcprof");
    REQUIRE(a.ranks.size() == 2);
    const RankBreakdown& r0 = a.ranks[0];
    const RankBreakdown& r1 = a.ranks[1];
    // Rank 0: main thread in calls 20 (comm) + 10 (io); outside calls 100 - 30 = 70.
    CHECK(r0.windowNs == 100);
    CHECK(r0.ns(TimeClass::Compute) == 70);
    CHECK(r0.ns(TimeClass::Communication) == 20);
    CHECK(r0.ns(TimeClass::Io) == 10);
    CHECK(r0.ns(TimeClass::Idle) == 0);
    // I/O on any thread: 20; the helper's [35,45) lies in main-thread compute [30,50).
    CHECK(r0.ioTotalNs == 20);
    CHECK(r0.ioOverlappedNs == 10);
    CHECK(r0.commTotalNs == 20);
    CHECK(r0.commOverlappedNs == 0);
    CHECK(r1.ns(TimeClass::Compute) == 95);
    CHECK(r1.ns(TimeClass::Communication) == 5);
    // Wait at N x N: last entry 25 (rank 1); rank 0 waits min(25, 30) - 10 = 15.
    REQUIRE(a.waits.completeInstances == 1);
    CHECK(a.waits.collectiveWaitNs == 15);
    CHECK(r0.waitNs == 15);
    CHECK(r1.waitNs == 0);
    REQUIRE(a.waits.stragglers.size() == 1);
    CHECK(a.waits.stragglers[0].rank == 1);
    CHECK(a.waits.stragglers[0].timesLast == 1);
    CHECK(a.waits.stragglers[0].inflictedWaitNs == 15);
    // POP: useful 70 and 95 -> LB = 82.5 / 95; transfer 20-15 = 5 and 5-0 = 5 -> ideal 95.
    CHECK(a.pop.runtimeNs == 100);
    CHECK(a.pop.maxUsefulNs == 95);
    CHECK(a.pop.loadBalance == Approx(82.5 / 95.0).epsilon(1e-12));
    CHECK(a.pop.idealRuntimeNs == 95);
    CHECK(a.pop.serialisationEfficiency == Approx(1.0));
    CHECK(a.pop.transferEfficiency == Approx(0.95));
    CHECK(a.pop.communicationEfficiency == Approx(0.95));
    CHECK(a.pop.parallelEfficiency == Approx(0.825));
    // Job: 200 rank-ns; compute 165, comm 25, io 10.
    CHECK(a.summary.totalNs == 200);
    CHECK(a.summary.pct(TimeClass::Compute) == Approx(82.5));
    CHECK(a.summary.pct(TimeClass::Communication) == Approx(12.5));
    CHECK(a.summary.pct(TimeClass::Io) == Approx(5.0));
}

TEST_CASE("GPU rank: the GPU timeline is the reference and host activity explains GPU idle time",
          "[golden][analyzer][gpu]") {
    // Process [0,1000). GPU stream: kernel [100,400), NCCL kernel [300,500), memcpy [500,550),
    // kernel [600,900). Host main thread: read [0,100), cudaStreamSynchronize [550,600).
    test::TraceBuilder b;
    int host = b.rank(0, 0, 1000, 1);
    int gpu = b.gpuStream(host, 0, 7);
    b.event(gpu, Category::GpuKernel, "ampere_bf16_gemm", 100, 300);
    b.event(gpu, Category::GpuCommKernel, "ncclDevKernel_AllReduce", 300, 200);
    b.event(gpu, Category::GpuMemcpy, "Memcpy DtoH", 500, 50).withBytes(1 << 20);
    b.event(gpu, Category::GpuKernel, "elementwise", 600, 300);
    b.event(host, Category::PosixIo, "read", 0, 100).withBytes(4096).withObject("/data/x");
    b.event(host, Category::GpuSync, "cudaStreamSynchronize", 550, 50);
    b.event(host, Category::CudaApi, "cudaLaunchKernel", 90, 5);
    test::TempDir dir;
    Analysis a = analyze(b, dir / "gpu.hpcprof");
    REQUIRE(a.ranks.size() == 1);
    const RankBreakdown& r = a.ranks[0];
    CHECK(r.gpu);
    // compute = kernels 300 + 300; comm = [300,500) minus compute = [400,500); io [0,100);
    // memory [500,550); sync [550,600); idle [900,1000). 600+100+100+50+50+100 = 1000.
    CHECK(r.ns(TimeClass::Compute) == 600);
    CHECK(r.ns(TimeClass::Communication) == 100);
    CHECK(r.ns(TimeClass::Io) == 100);
    CHECK(r.ns(TimeClass::Memory) == 50);
    CHECK(r.ns(TimeClass::Sync) == 50);
    CHECK(r.ns(TimeClass::Idle) == 100);
    CHECK(r.commTotalNs == 200);
    CHECK(r.commOverlappedNs == 100);
    // GPU busy [100,550) + [600,900) = 750 -> idle 250.
    CHECK(r.gpuIdleNs == 250);
    CHECK(a.summary.gpuRankCount == 1);
    REQUIRE_FALSE(a.topKernels.empty());
    CHECK(a.topKernels[0].totalNs == 300);
}

TEST_CASE("point-to-point: late sender and late receiver are measured and blamed on the partner",
          "[golden][analyzer]") {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 100, 2);
    int r1 = b.rank(1, 0, 100, 2);
    // Tag 5: receive posted at 10, send only at 50 -> rank 1 waits min(50, 62) - 10 = 40.
    b.event(r0, Category::MpiP2p, "MPI_Send", 50, 10).withPeer(1).withTag(5).withBytes(64);
    b.event(r1, Category::MpiP2p, "MPI_Recv", 10, 52).withPeer(0).withTag(5).withBytes(64);
    // Tag 6: send blocks from 70, receive posted at 90 -> rank 0 waits min(90, 95) - 70 = 20.
    b.event(r0, Category::MpiP2p, "MPI_Send", 70, 25).withPeer(1).withTag(6).withBytes(1 << 20);
    b.event(r1, Category::MpiP2p, "MPI_Recv", 90, 6).withPeer(0).withTag(6).withBytes(1 << 20);
    // A message without partner.
    b.event(r1, Category::MpiP2p, "MPI_Recv", 97, 1).withPeer(0).withTag(9).withBytes(1);
    test::TempDir dir;
    Analysis a = analyze(b, dir / "p2p.hpcprof");
    CHECK(a.waits.matchedMessages == 2);
    CHECK(a.waits.unmatchedMessages == 1);
    CHECK(a.waits.lateSenderNs == 40);
    CHECK(a.waits.lateReceiverNs == 20);
    CHECK(a.ranks[1].waitNs == 40);
    CHECK(a.ranks[0].waitNs == 20);
    REQUIRE(a.waits.stragglers.size() == 2);
    CHECK(a.waits.stragglers[0].rank == 0); // inflicted 40
    CHECK(a.waits.stragglers[0].inflictedWaitNs == 40);
    CHECK(a.waits.stragglers[1].rank == 1);
    CHECK(a.waits.stragglers[1].inflictedWaitNs == 20);
}

TEST_CASE("a time window and a range-name window restrict the breakdown", "[golden][analyzer]") {
    test::TraceBuilder b = cpuTwoRanks();
    test::TempDir dir;
    AnalysisOptions o;
    auto w = parseWindow("20:60");
    REQUIRE(w.ok());
    o.window = *w;
    Analysis a = analyze(b, dir / "w.hpcprof", o);
    // Rank 0 in [20,60): comm [20,30) = 10, io [50,60) = 10, compute 20.
    CHECK(a.summary.wallNs == 40);
    CHECK(a.ranks[0].ns(TimeClass::Communication) == 10);
    CHECK(a.ranks[0].ns(TimeClass::Io) == 10);
    CHECK(a.ranks[0].ns(TimeClass::Compute) == 20);

    // Range windows: each rank's own "ProfilerStep#" ranges.
    test::TraceBuilder s;
    int r0 = s.rank(0, 0, 100, 1);
    s.event(r0, Category::UserRange, "ProfilerStep#1", 0, 40);
    s.event(r0, Category::UserRange, "ProfilerStep#2", 60, 30);
    s.event(r0, Category::MpiCollective, "MPI_Barrier", 30, 40).collective("world", 1, 0);
    AnalysisOptions ro;
    ro.window = *parseWindow("range:ProfilerStep*");
    Analysis ra = analyze(s, dir / "r.hpcprof", ro);
    // Window [0,40) + [60,90) = 70; barrier inside it: [30,40) + [60,70) = 20.
    CHECK(ra.ranks[0].windowNs == 70);
    CHECK(ra.ranks[0].ns(TimeClass::Communication) == 20);
    CHECK(ra.ranks[0].ns(TimeClass::Compute) == 50);
    // Steps come from the same ranges.
    REQUIRE(ra.steps.steps.size() == 2);
    CHECK(ra.steps.source == "range:ProfilerStep#");
    CHECK(ra.steps.steps[0].durNs == 40);
    CHECK(ra.steps.steps[1].durNs == 30);
    CHECK(ra.steps.meanNs == 35);

    CHECK_FALSE(parseWindow("60:20").ok());
    CHECK_FALSE(parseWindow("abc").ok());
    CHECK(parseWindow("1.5ms:2ms")->begin == 1'500'000);
}

TEST_CASE("steps are found from the repeating pattern of collectives when there are no ranges",
          "[golden][analyzer]") {
    // Each step: Allreduce then Bcast; 4 steps; rank 1's steps take 10 ns longer from step 2 on.
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 1000, 2);
    int r1 = b.rank(1, 0, 1000, 2);
    for (int k = 0; k < 4; ++k) {
        int64_t t = 100 * k;
        b.event(r0, Category::MpiCollective, "MPI_Allreduce", t + 50, 5).collective("world", 2, 2 * k);
        b.event(r0, Category::MpiCollective, "MPI_Bcast", t + 80, 5).collective("world", 2, 2 * k + 1);
        int64_t shift = k >= 2 ? 10 * (k - 1) : 0;
        b.event(r1, Category::MpiCollective, "MPI_Allreduce", t + 50 + shift, 5).collective("world", 2, 2 * k);
        b.event(r1, Category::MpiCollective, "MPI_Bcast", t + 80 + shift, 5).collective("world", 2, 2 * k + 1);
    }
    test::TempDir dir;
    Analysis a = analyze(b, dir / "steps.hpcprof");
    CHECK(a.steps.source == "collectives:2");
    // Steps from Allreduce k to Allreduce k+1: rank 0 100,100,100; rank 1 100,110,110.
    REQUIRE(a.steps.steps.size() == 3);
    CHECK(a.steps.steps[0].durNs == 100);
    CHECK(a.steps.steps[1].durNs == 110);
    CHECK(a.steps.steps[1].spreadNs == 10);
    CHECK(a.steps.steps[2].durNs == 110);
    CHECK(a.steps.maxNs == 110);
}

namespace {
// Two CPU ranks over [0, 1000): an outer range "iteration" k at [100 + 200k, 300 + 200k) for
// k = 0..3 (800 of the 1000 ns: tiles 80 %), inside each two "phase" ranges of 50 ns (more
// instances, but 40 % of the run), and an MPI_Allreduce [250 + 200k, 270 + 200k) per iteration.
test::TraceBuilder periodicRanges(bool imported) {
    test::TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        int t = b.rank(r, 0, 1000, 2);
        if (imported) b.setImported(t);
        for (int k = 0; k < 4; ++k) {
            const int64_t s = 100 + 200 * k;
            b.event(t, Category::UserRange, "iteration", s, 200);
            b.event(t, Category::UserRange, "phase", s, 50).withDepth(1);
            b.event(t, Category::UserRange, "phase", s + 100, 50).withDepth(1);
            b.event(t, Category::MpiCollective, "MPI_Allreduce", s + 150, 20).collective("world", 2, k).withDepth(1);
        }
    }
    return b;
}
} // namespace

TEST_CASE("steps: a range family that tiles most of every rank's activity, not the one with more "
          "instances; a captured run keeps its whole window", "[golden][analyzer]") {
    test::TempDir dir;
    Analysis a = analyze(periodicRanges(false), dir / "p.hpcprof");
    CHECK(a.steps.basis == "tiling");
    CHECK(a.steps.source == "range:iteration");
    CHECK(a.steps.tiling == Approx(0.8));
    CHECK(a.steps.reason == "range iteration (tiles 80% of active time)");
    REQUIRE(a.steps.steps.size() == 4);
    CHECK(a.steps.meanNs == 200);
    // Per step: Allreduce 20 ns of communication, 180 ns of compute on each rank.
    REQUIRE(a.steps.ranks.size() == 2);
    for (const RankSteps& rs : a.steps.ranks) {
        REQUIRE(rs.steps.size() == 4);
        CHECK(rs.stddevNs == 0);
        CHECK(rs.steps[2].exclusive[int(TimeClass::Communication)] == 20);
        CHECK(rs.steps[2].exclusive[int(TimeClass::Compute)] == 180);
    }
    // hpcprof run captured it: the processes' lives are the window, as before.
    CHECK(a.windowChoice.basis == "whole");
    CHECK(a.summary.wallNs == 1000);

    // The same imported from a profiler: the steps are the window, [100, 900).
    Analysis imp = analyze(periodicRanges(true), dir / "i.hpcprof");
    CHECK(imp.steps.basis == "tiling");
    CHECK(imp.windowChoice.basis == "steps");
    CHECK(imp.summary.windowBegin == 100);
    CHECK(imp.summary.wallNs == 800);

    // --steps phase: 8 steps of 50 ns per rank; an explicit choice is the window, captured too.
    AnalysisOptions o;
    o.steps = "phase";
    Analysis ph = analyze(periodicRanges(false), dir / "ph.hpcprof", o);
    CHECK(ph.steps.basis == "option");
    CHECK(ph.steps.steps.size() == 8);
    CHECK(ph.windowChoice.basis == "steps");
    CHECK(ph.summary.windowBegin == 100);
    CHECK(ph.summary.windowEnd == 850);

    // --steps collectives: the collective pattern (period 1: every Allreduce starts a step).
    o.steps = "collectives";
    Analysis co = analyze(periodicRanges(false), dir / "co.hpcprof", o);
    CHECK(co.steps.basis == "option");
    CHECK(co.steps.source == "collectives:1");
    CHECK(co.steps.steps.size() == 3);
    CHECK(co.windowChoice.basis == "whole");
}

TEST_CASE("steps: ranges that tile half the run or less are phases, not steps", "[golden][analyzer]") {
    test::TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        int t = b.rank(r, 0, 1000, 2);
        for (int k = 0; k < 4; ++k) b.event(t, Category::UserRange, "forward", 100 + 200 * k, 100); // 40 %
    }
    test::TempDir dir;
    Analysis a = analyze(b, dir / "f.hpcprof");
    CHECK(a.steps.steps.empty());
    CHECK(a.steps.basis.empty());
    // A GPU-side copy of ProfilerStep (Kineto's gpu_user_annotation) is not a step.
    test::TraceBuilder g;
    int t = g.rank(0, 0, 1000, 1);
    int s = g.gpuStream(t, 0, 7);
    g.event(t, Category::UserRange, "ProfilerStep#1", 100, 300);
    g.event(t, Category::UserRange, "ProfilerStep#2", 400, 300);
    g.event(s, Category::UserRange, "ProfilerStep#1", 150, 300);
    g.event(s, Category::UserRange, "ProfilerStep#2", 450, 300);
    g.event(s, Category::GpuKernel, "k", 150, 100);
    Analysis ga = analyze(g, dir / "g.hpcprof");
    CHECK(ga.steps.basis == "profiler_step");
    REQUIRE(ga.steps.steps.size() == 2);
    CHECK(ga.steps.steps[0].durNs == 300);
    // The window is the CPU steps [100, 700); step 0 has the kernel's 100 ns of compute.
    CHECK(ga.windowChoice.basis == "steps");
    CHECK(ga.summary.wallNs == 600);
    CHECK(ga.steps.ranks[0].steps[0].gpuIdleNs == 200);
    CHECK(ga.steps.ranks[0].steps[1].gpuIdleNs == 300);
}
