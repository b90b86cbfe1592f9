// SPDX-License-Identifier: MIT
// Every advice rule: one trace that fires it (with the expected evidence and gain) and one that
// must not. Traces are tiny and built by hand; the numbers are in the comments.
#include <catch2/catch.hpp>

#include "families/communication/small_call_floor.hpp"

#include <functional>
#include <set>

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

Analysis run(const std::function<void(test::TraceBuilder&)>& build) { return test::analyseBuilt(build); }

const Finding* find(const Analysis& a, const std::string& id) { return test::findFinding(a, id); }
double evidence(const Finding& f, const std::string& key) { return test::findingEvidence(f, key); }

} // namespace

TEST_CASE("every rule is in the reference with a unique id", "[analyzer][advice]") {
    std::set<std::string> ids;
    for (const auto& r : ruleReference()) ids.insert(r.id);
    CHECK(ids.size() == ruleReference().size());
    // 12 + the CPU-counter rules (oversubscription, low-ipc, shared-cores) + the RDMA rules
    // (rdma-small-messages, rdma-low-bandwidth) + openmp-imbalance + waits-for-workers + the GPU
    // idle-cause rules (gpu-waits-for-input, gpu-host-bound) + job-hang.
    CHECK(ids.size() == 22);
}

TEST_CASE("rule exposed-communication fires on 30 % exposed communication, not on 5 %", "[analyzer][advice]") {
    auto build = [](int64_t dur) {
        return [dur](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 1000, 1);
            b.event(t, Category::MpiCollective, "MPI_Allreduce", 100, dur).collective("world", 1, 0);
        };
    };
    Analysis yes = run(build(300));
    const Finding* f = find(yes, "exposed-communication");
    REQUIRE(f);
    CHECK(evidence(*f, "comm.exposed_pct") == Approx(30.0));
    CHECK(f->estimatedGainNs == 300);
    CHECK(f->severity == Severity::Critical);
    CHECK(f->ranks == std::vector<int64_t>{0});
    CHECK_FALSE(f->suggestion.empty());
    CHECK_FALSE(find(run(build(50)), "exposed-communication"));
}

TEST_CASE("rule load-imbalance fires when one rank computes half as much, not when balanced",
          "[analyzer][advice]") {
    auto build = [](int64_t rank1Barrier) {
        return [rank1Barrier](test::TraceBuilder& b) {
            int r0 = b.rank(0, 0, 1000, 2);
            int r1 = b.rank(1, 0, 1000, 2);
            b.event(r0, Category::MpiCollective, "MPI_Barrier", 990, 10).collective("world", 2, 0);
            b.event(r1, Category::MpiCollective, "MPI_Barrier", rank1Barrier, 1000 - rank1Barrier).collective("world", 2, 0);
        };
    };
    Analysis yes = run(build(500));
    const Finding* f = find(yes, "load-imbalance");
    REQUIRE(f);
    // useful 990 and 500: avg 745, max 990, LB 0.7525, gain 245.
    CHECK(evidence(*f, "pop.load_balance") == Approx(745.0 / 990.0));
    CHECK(f->estimatedGainNs == 245);
    CHECK(f->ranks == std::vector<int64_t>{0});
    CHECK_FALSE(find(run(build(985)), "load-imbalance"));
}

TEST_CASE("rule load-imbalance measures every rank between MPI_Init and MPI_Finalize, as POP does",
          "[analyzer][advice]") {
    // Rank 0 computes 590 between its MPI_Init and MPI_Finalize and 190 after them (780 in the
    // whole run); rank 1 computes 790, all inside. POP's useful time: 590 and 790, average 690.
    Analysis a = run([](test::TraceBuilder& b) {
        int r0 = b.rank(0, 0, 1100, 2);
        int r1 = b.rank(1, 0, 1000, 2);
        b.event(r0, Category::MpiSetup, "MPI_Init", 0, 100);
        b.event(r1, Category::MpiSetup, "MPI_Init", 0, 100);
        b.event(r0, Category::MpiCollective, "MPI_Barrier", 690, 210).collective("world", 2, 0);
        b.event(r1, Category::MpiCollective, "MPI_Barrier", 890, 10).collective("world", 2, 0);
        b.event(r0, Category::MpiSetup, "MPI_Finalize", 900, 10);
        b.event(r1, Category::MpiSetup, "MPI_Finalize", 900, 100);
    });
    REQUIRE(a.pop.region == "init_to_finalize");
    const Finding* f = find(a, "load-imbalance");
    REQUIRE(f);
    CHECK(evidence(*f, "max_compute_ns") == Approx(790));
    CHECK(evidence(*f, "avg_compute_ns") == Approx(690));
    CHECK(evidence(*f, "min_compute_ns") == Approx(590)); // not rank 0's 780 of the whole run
    CHECK(f->ranks == std::vector<int64_t>{1});            // rank 0's 590 is under the average
    CHECK(f->estimatedGainNs == 100);
}

TEST_CASE("rule straggler names the rank that enters collectives late, not when entries align",
          "[analyzer][advice]") {
    auto build = [](int64_t lateBy) {
        return [lateBy](test::TraceBuilder& b) {
            int r0 = b.rank(0, 0, 1000, 2);
            int r1 = b.rank(1, 0, 1000, 2);
            for (int i = 0; i < 10; ++i) {
                b.event(r0, Category::MpiCollective, "MPI_Allreduce", 100 * i + 10, 60).collective("world", 2, i);
                b.event(r1, Category::MpiCollective, "MPI_Allreduce", 100 * i + 10 + lateBy, 60 - lateBy)
                    .collective("world", 2, i);
            }
        };
    };
    Analysis yes = run(build(50));
    const Finding* f = find(yes, "straggler");
    REQUIRE(f);
    CHECK(f->ranks == std::vector<int64_t>{1});
    CHECK(evidence(*f, "times_last") == 10);
    CHECK(evidence(*f, "inflicted_wait_ns") == 500);
    CHECK(f->estimatedGainNs == 500);
    CHECK_FALSE(find(run(build(0)), "straggler"));
}

TEST_CASE("rule straggler stays silent when lateness rotates among the ranks", "[analyzer][advice]") {
    // 3 ranks, 12 Allreduces; in instance i rank (i mod 3) enters 50 late, or (always = true)
    // rank 2 does every time. Rotating: each rank inflicts 4 x 2 x 50 = 400, the top one no more
    // than the others' median: no rank is the straggler. Always rank 2: it inflicts 1200, the
    // others 0.
    auto build = [](bool always) {
        return [always](test::TraceBuilder& b) {
            int t[3] = {b.rank(0, 0, 1200, 3), b.rank(1, 0, 1200, 3), b.rank(2, 0, 1200, 3)};
            for (int i = 0; i < 12; ++i) {
                const int late = always ? 2 : i % 3;
                for (int r = 0; r < 3; ++r) {
                    const int64_t enter = 100 * i + 10 + (r == late ? 50 : 0);
                    b.event(t[r], Category::MpiCollective, "MPI_Allreduce", enter, 100 * i + 70 - enter)
                        .collective("world", 3, i);
                }
            }
        };
    };
    Analysis rotating = run(build(false));
    REQUIRE(rotating.waits.stragglers.size() == 3);
    CHECK(rotating.waits.stragglers[0].inflictedWaitNs == 400);
    CHECK_FALSE(find(rotating, "straggler"));
    Analysis always = run(build(true));
    const Finding* f = find(always, "straggler");
    REQUIRE(f);
    CHECK(f->ranks == std::vector<int64_t>{2});
    CHECK(evidence(*f, "inflicted_wait_ns") == 1200);
}

TEST_CASE("rule io-bound fires on 20 % exposed I/O, not on 2 %", "[analyzer][advice]") {
    auto build = [](int64_t dur) {
        return [dur](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 1000, 1);
            b.event(t, Category::PosixIo, "read", 100, dur).withBytes(1 << 20).withObject("/data/train.bin");
        };
    };
    const Finding* f = nullptr;
    Analysis yes = run(build(200));
    REQUIRE((f = find(yes, "io-bound")));
    CHECK(evidence(*f, "io.exposed_pct") == Approx(20.0));
    CHECK(f->estimatedGainNs == 200);
    CHECK_FALSE(find(run(build(20)), "io-bound"));
}

TEST_CASE("rule small-messages fires on 200 sends of 100 bytes, not on 200 sends of 1 MiB",
          "[analyzer][advice]") {
    auto build = [](int64_t bytes) {
        return [bytes](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 10000, 1);
            for (int i = 0; i < 200; ++i)
                b.event(t, Category::MpiP2p, "MPI_Isend", 40 * i, 5).withPeer(1).withTag(0).withBytes(bytes);
        };
    };
    Analysis yes = run(build(100));
    const Finding* f = find(yes, "small-messages");
    REQUIRE(f);
    CHECK(evidence(*f, "small_calls") == 200);
    CHECK(f->estimatedGainNs == 1000);
    CHECK(f->eventIds.size() == 3);
    CHECK_FALSE(find(run(build(1 << 20)), "small-messages"));
}

TEST_CASE("rule small-messages claims at most each call at the fast end of its kind", "[analyzer][advice]") {
    // 200 sends of 100 B: 20 take 5 ns, 180 take 50 ns (a CPU shared with other ranks). Packing
    // them saves per-call costs, which the fastest tenth bounds: 200 x 5 = 1000 (5 % of the
    // 20000 window: fires), not the 9100 the calls take.
    auto build = [](int64_t slowDur) {
        return [slowDur](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 20000, 1);
            for (int i = 0; i < 200; ++i)
                b.event(t, Category::MpiP2p, "MPI_Isend", 80 * i, i % 10 == 0 ? 5 : slowDur)
                    .withPeer(1).withTag(0).withBytes(100);
        };
    };
    const Analysis a = run(build(50));
    const Finding* f = find(a, "small-messages");
    REQUIRE(f);
    CHECK(evidence(*f, "small_calls_ns") == 20 * 5 + 180 * 50);
    CHECK(evidence(*f, "small_calls_floor_ns") == 200 * 5);
    CHECK(f->estimatedGainNs == 1000);
}

TEST_CASE("the small-call floor: 10th percentile per name, on a log scale of 4 buckets per doubling",
          "[analyzer][advice]") {
    families::SmallCallFloor floor;
    for (int i = 0; i < 9; ++i) floor.add(1, 1600, 1); // 1600 lies in [1536, 1792)
    floor.add(1, 100'000, 1);
    floor.add(2, 7, 10); // a folded loop of 10 calls of 7 ns
    floor.add(2, 0, 1);
    CHECK(floor.floorOf(1) == 1536);
    CHECK(floor.floorOf(2) == 7); // 10 % of 11 calls: the 0-ns call and then the 7s
    CHECK(floor.floorOf(3) == 0);
    CHECK(floor.floorNs() == 10 * 1536 + 11 * 7);
}

TEST_CASE("rule small-messages leaves out the wait for late senders inside the small calls",
          "[analyzer][advice]") {
    // Rank 0: 200 MPI_Recv of 100 B at 40 i lasting `dur`; rank 1 sends each at 40 i + 25.
    // Each receive waits 25 for its late sender (200 x 25 = 5000 of wait); what is left is
    // latency: dur 30 -> 200 x 5 = 1000 = 10 % of the 10000 window (fires, gain 1000);
    // dur 26 -> 200 = 2 % (does not fire, although the calls take 52 % of the window).
    auto build = [](int64_t dur) {
        return [dur](test::TraceBuilder& b) {
            int r0 = b.rank(0, 0, 10000, 2), r1 = b.rank(1, 0, 10000, 2);
            for (int i = 0; i < 200; ++i) {
                b.event(r0, Category::MpiP2p, "MPI_Recv", 40 * i, dur).withPeer(1).withTag(0).withBytes(100);
                b.event(r1, Category::MpiP2p, "MPI_Send", 40 * i + 25, 1).withPeer(0).withTag(0).withBytes(100);
            }
        };
    };
    Analysis yes = run(build(30));
    const Finding* f = find(yes, "small-messages");
    REQUIRE(f);
    CHECK(evidence(*f, "small_calls_ns") == 200 * 30 + 200 * 1);
    CHECK(evidence(*f, "small_calls_wait_ns") == 5000);
    CHECK(f->estimatedGainNs == 1000);
    CHECK(f->ranks == std::vector<int64_t>{0});
    CHECK_FALSE(find(run(build(26)), "small-messages"));
}

TEST_CASE("rule small-io fires on 200 writes of 512 bytes, not on 200 writes of 1 MiB", "[analyzer][advice]") {
    auto build = [](int64_t bytes) {
        return [bytes](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 10000, 1);
            for (int i = 0; i < 200; ++i)
                b.event(t, Category::PosixIo, "write", 40 * i, 5).withBytes(bytes).withObject("/out/log");
        };
    };
    Analysis yes = run(build(512));
    const Finding* f = find(yes, "small-io");
    REQUIRE(f);
    CHECK(evidence(*f, "small_requests") == 200);
    CHECK(evidence(*f, "mean_request_bytes") == 512);
    CHECK(f->estimatedGainNs == 1000);
    CHECK_FALSE(find(run(build(1 << 20)), "small-io"));
}

TEST_CASE("rule frequent-sync fires on 200 device synchronizations taking 10 %, not on 10",
          "[analyzer][advice]") {
    auto build = [](int n) {
        return [n](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 10000, 1);
            for (int i = 0; i < n; ++i) b.event(t, Category::GpuSync, "cudaDeviceSynchronize", 40 * i, 5);
        };
    };
    Analysis yes = run(build(200));
    const Finding* f = find(yes, "frequent-sync");
    REQUIRE(f);
    CHECK(evidence(*f, "sync_calls") == 200);
    CHECK(f->estimatedGainNs == 1000);
    CHECK_FALSE(find(run(build(10)), "frequent-sync"));
}

TEST_CASE("rule gpu-idle fires when the GPU is idle half the time, not at 5 %", "[analyzer][advice][gpu]") {
    auto build = [](int64_t kernel) {
        return [kernel](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 1000, 1);
            int g = b.gpuStream(t, 0, 7);
            b.event(g, Category::GpuKernel, "conv2d_fwd", 0, kernel);
        };
    };
    Analysis yes = run(build(500));
    const Finding* f = find(yes, "gpu-idle");
    REQUIRE(f);
    CHECK(evidence(*f, "gpu_idle_pct") == Approx(50.0));
    CHECK(f->estimatedGainNs == 500);
    CHECK_FALSE(find(run(build(950)), "gpu-idle"));
}

TEST_CASE("rule launch-bound fires on tiny kernels with short gaps, not on long kernels",
          "[analyzer][advice][gpu]") {
    auto build = [](int64_t kernel, int64_t gap) {
        return [kernel, gap](test::TraceBuilder& b) {
            int64_t end = 200 * (kernel + gap);
            int t = b.rank(0, 0, end, 1);
            int g = b.gpuStream(t, 0, 7);
            for (int i = 0; i < 200; ++i) b.event(g, Category::GpuKernel, "vectorized_elementwise", i * (kernel + gap), kernel);
        };
    };
    Analysis yes = run(build(5000, 5000));
    const Finding* f = find(yes, "launch-bound");
    REQUIRE(f);
    CHECK(evidence(*f, "short_kernels") == 200);
    CHECK(evidence(*f, "short_gaps") == 199);
    CHECK(f->estimatedGainNs == 199 * 5000);
    CHECK_FALSE(find(run(build(50000, 1000)), "launch-bound"));
}

TEST_CASE("rule host-device-copies fires on pageable copies, not on pinned ones", "[analyzer][advice][gpu]") {
    auto build = [](const char* kind) {
        return [kind](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 1000, 1);
            int g = b.gpuStream(t, 0, 7);
            b.event(g, Category::GpuMemcpy, "Memcpy HtoD", 100, 100).withBytes(1 << 20)
                .withArg("copy_kind", "HtoD").withArg("src_kind", kind).withArg("dst_kind", "device");
            b.event(g, Category::GpuKernel, "k", 200, 700);
        };
    };
    Analysis yes = run(build("pageable"));
    const Finding* f = find(yes, "host-device-copies");
    REQUIRE(f);
    CHECK(evidence(*f, "pageable_copies") == 1);
    CHECK(f->estimatedGainNs == 100);
    CHECK(f->eventIds.size() == 1);
    CHECK_FALSE(find(run(build("pinned")), "host-device-copies"));
}

TEST_CASE("rule host-device-copies also fires on blocking cudaMemcpy calls", "[analyzer][advice][gpu]") {
    Analysis a = run([](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 1000, 1);
        int g = b.gpuStream(t, 0, 7);
        b.event(t, Category::CudaApi, "cudaMemcpy", 100, 50);
        b.event(t, Category::CudaApi, "cudaMemcpyAsync", 300, 50);
        b.event(g, Category::GpuKernel, "k", 0, 900);
    });
    const Finding* f = find(a, "host-device-copies");
    REQUIRE(f);
    CHECK(evidence(*f, "sync_copies") == 1);
    CHECK(f->estimatedGainNs == 50);
}

TEST_CASE("rule fp32-gemm fires on sgemm kernels, not on bf16 tensor-core GEMMs", "[analyzer][advice][gpu]") {
    auto build = [](const char* name) {
        return [name](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 1000, 1);
            int g = b.gpuStream(t, 0, 7);
            b.event(g, Category::GpuKernel, name, 0, 500);
            b.event(g, Category::GpuKernel, "relu", 500, 400);
        };
    };
    Analysis yes = run(build("volta_sgemm_128x64_nn"));
    const Finding* f = find(yes, "fp32-gemm");
    REQUIRE(f);
    CHECK(evidence(*f, "fp32_gemm_ns") == 500);
    CHECK(f->estimatedGainNs == 250);
    CHECK_FALSE(find(run(build("ampere_bf16_s16816gemm_bf16_128x64")), "fp32-gemm"));
}

TEST_CASE("rule low-collective-bandwidth fires at 0.8 GB/s on a 12.5 GB/s link, not at 17 GB/s",
          "[analyzer][advice]") {
    auto build = [](int64_t dur) {
        return [dur](test::TraceBuilder& b) {
            int64_t end = 20 * (dur + 1000);
            int r0 = b.rank(0, 0, end, 2);
            int r1 = b.rank(1, 0, end, 2);
            b.setHost(r1, "node-b"); // two hosts: the link is the reference
            for (int i = 0; i < 20; ++i)
                for (int t : {r0, r1})
                    b.event(t, Category::MpiCollective, "MPI_Allreduce", i * (dur + 1000), dur)
                        .collective("world", 2, i).withBytes(8 << 20);
        };
    };
    Analysis yes = run(build(10'000'000));
    const Finding* f = find(yes, "low-collective-bandwidth");
    REQUIRE(f);
    // 8 MiB in 10 ms = 838.9 MB/s; at 12.5 GB/s it would take 0.671 ms: 20 x (10 - 0.671) ms.
    CHECK(evidence(*f, "achieved_bytes_per_s") == Approx(8.0 * 1048576 / 0.01));
    CHECK(f->estimatedGainNs == 200'000'000 - int64_t(20.0 * 8 * 1048576 / 12.5e9 * 1e9));
    CHECK(f->ranks == std::vector<int64_t>{0, 1});
    CHECK(evidence(*f, "reference_bytes_per_s") == Approx(12.5e9));
    CHECK(evidence(*f, "one_host") == 0);
    CHECK_FALSE(find(run(build(500'000)), "low-collective-bandwidth"));
}

TEST_CASE("rule low-collective-bandwidth compares ranks on one host with a memory copy, not the link",
          "[analyzer][advice]") {
    // Both ranks on node0: 8 MiB in 10 ms against the 10 GB/s default copy bandwidth, which
    // would take 0.839 ms: 20 x (10 - 0.839) ms.
    Analysis a = run([](test::TraceBuilder& b) {
        const int64_t dur = 10'000'000;
        int r0 = b.rank(0, 0, 20 * (dur + 1000), 2);
        int r1 = b.rank(1, 0, 20 * (dur + 1000), 2);
        for (int i = 0; i < 20; ++i)
            for (int t : {r0, r1})
                b.event(t, Category::MpiCollective, "MPI_Allreduce", i * (dur + 1000), dur)
                    .collective("world", 2, i).withBytes(8 << 20);
    });
    const Finding* f = find(a, "low-collective-bandwidth");
    REQUIRE(f);
    CHECK(a.collectiveBandwidthBasis == "memory");
    CHECK(evidence(*f, "reference_bytes_per_s") == Approx(10e9));
    CHECK(evidence(*f, "one_host") == 1);
    CHECK(f->estimatedGainNs == 200'000'000 - int64_t(20.0 * 8 * 1048576 / 10e9 * 1e9));
}

TEST_CASE("exclusive gains: time two rules blame is counted once, and they sum to at most the runtime",
          "[analyzer][advice]") {
    // Rank 0 computes 990 ns then enters the barrier; rank 1 computes 500 ns and waits 490 ns of
    // its 500 ns barrier for rank 0. Estimated gains: exposed-communication 500 (rank 1's
    // exposed MPI time), straggler 490 (the wait rank 0 inflicts), load-imbalance 245 (max 990 -
    // avg 745): 1235 ns on a 1000 ns run, all three blaming rank 1's barrier.
    Analysis a = run([](test::TraceBuilder& b) {
        int r0 = b.rank(0, 0, 1000, 2);
        int r1 = b.rank(1, 0, 1000, 2);
        b.event(r0, Category::MpiCollective, "MPI_Barrier", 990, 10).collective("world", 2, 0);
        b.event(r1, Category::MpiCollective, "MPI_Barrier", 500, 500).collective("world", 2, 0);
    });
    REQUIRE(a.pop.runtimeNs == 1000);
    const Finding* comm = find(a, "exposed-communication");
    const Finding* late = find(a, "straggler");
    const Finding* imbalance = find(a, "load-imbalance");
    REQUIRE(comm);
    REQUIRE(late);
    REQUIRE(imbalance);
    CHECK(comm->estimatedGainNs + late->estimatedGainNs + imbalance->estimatedGainNs == 1235);
    // exposed-communication comes first but claims only what overlap removes, communication
    // less wait: 10 ns on each rank, exclusive 10. The straggler then claims rank 1's wait,
    // min(490, 490), from its 490 ns of communication left, and rank 0's 490 ns of compute
    // beyond rank 1's. Nothing of rank 1's communication, sync or idle time is left for the
    // imbalance's min(245, 990 - 500): 0. The straggler's excess is moved to rank 1 by
    // rebalancing, not removed: the two ranks still compute 745 ns each on average, which
    // leaves 255 ns of T, 10 for exposed-communication and 245 for the straggler (the run of
    // the rebalanced job: 745 + 10 ns).
    CHECK(comm->exclusiveGainNs == 10);
    CHECK(late->exclusiveGainNs == 245);
    CHECK(imbalance->exclusiveGainNs == 0);
    CHECK(a.findingsGainNs == 255);
    int64_t sum = 0;
    for (const auto& f : a.findings) sum += f.exclusiveGainNs;
    CHECK(sum == a.findingsGainNs);
    CHECK(sum <= a.pop.runtimeNs);
}

TEST_CASE("exclusive gains: a rule blaming time a larger one claims gets none of it", "[analyzer][advice]") {
    // Rank 0 of 1000 ns: a 300 ns MPI_Allreduce and 100 small ones (8 bytes) of 2 ns, all
    // exposed communication: exposed-communication (500) claims the 500 ns first and
    // small-messages (its 200 ns of latency, the same time) finds none left.
    Analysis a = run([](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 1000, 1);
        b.event(t, Category::MpiCollective, "MPI_Allreduce", 100, 300).collective("world", 1, 0);
        for (int i = 0; i < 100; ++i) b.event(t, Category::MpiCollective, "MPI_Allreduce", 500 + 2 * i, 2)
            .collective("world", 1, i + 1).withBytes(8);
    });
    const Finding* comm = find(a, "exposed-communication");
    const Finding* small = find(a, "small-messages");
    REQUIRE(comm);
    REQUIRE(small);
    CHECK(comm->estimatedGainNs == 500);
    CHECK(comm->exclusiveGainNs == 500);
    CHECK(small->estimatedGainNs == 200);
    CHECK(small->exclusiveGainNs == 0);
    CHECK(a.findingsGainNs == 500);
}

TEST_CASE("advice is worded for the kind of program", "[analyzer][advice]") {
    auto build = [](const char* source, const char* call) {
        return [source, call](test::TraceBuilder& b) {
            int t = b.rank(0, 0, 1000, 1);
            b.setRankSource(t, source);
            b.event(t, Category::MpiCollective, call, 100, 300).collective("world", 1, 0);
        };
    };
    Analysis mpi = run(build("MPI", "MPI_Allreduce"));
    Analysis ddp = run(build("RANK", "ncclAllReduce"));
    Analysis plain = run(build("test", "MPI_Allreduce"));
    CHECK(mpi.programKind == "mpi");
    CHECK(ddp.programKind == "data_parallel");
    CHECK(plain.programKind == "processes");
    const Finding* m = find(mpi, "exposed-communication");
    const Finding* d = find(ddp, "exposed-communication");
    REQUIRE(m);
    REQUIRE(d);
    CHECK(m->suggestion.find("MPI_Isend") != std::string::npos);
    CHECK(d->suggestion.find("DDP") != std::string::npos);
    CHECK(d->suggestion.find("MPI") == std::string::npos);
}
