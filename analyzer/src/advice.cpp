// SPDX-License-Identifier: MIT
// The advice rules. Thresholds are constants here and listed in docs/advice-rules.md; each
// rule's estimated gain is an upper bound of the runtime it could save (the runtime cannot
// shrink by more than the largest per-rank time the change removes).
#include "hpcprof/analyzer/advice.hpp"

#include <algorithm>

#include "hpcprof/analyzer/counters.hpp"
#include "rdma_analysis.hpp"

namespace hpcprof::analyzer {

namespace {

constexpr double kExposedCommPct = 10.0;
constexpr double kLoadBalance = 0.90;
constexpr double kStragglerWaitShare = 0.02;
constexpr double kIoExposedPct = 10.0;
constexpr int64_t kManyCalls = 100;
constexpr double kSmallShare = 0.05;
constexpr double kSyncShare = 0.05;
constexpr double kGpuIdleShare = 0.20;
constexpr double kShortKernelShare = 0.5;
constexpr double kCopyShare = 0.01;
constexpr double kFp32GemmShare = 0.10;
constexpr int64_t kLargeCollectives = 10;
constexpr double kLowBandwidth = 0.30;

double share(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

/// Ranks sorted by a per-rank value, descending, those with value > 0, at most 8.
std::vector<int64_t> topRanks(const Analysis& a, const std::function<int64_t(const RankBreakdown&)>& value) {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (const auto& r : a.ranks)
        if (value(r) > 0) v.push_back({value(r), r.rank});
    std::sort(v.begin(), v.end(), [](auto& x, auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size() && i < 8; ++i) out.push_back(v[i].second);
    return out;
}

int64_t maxOver(const Analysis& a, const std::function<int64_t(const RankBreakdown&)>& value) {
    int64_t m = 0;
    for (const auto& r : a.ranks) m = std::max(m, value(r));
    return m;
}

void addExamples(Finding& f, const Analysis& a, const char* key) {
    for (int64_t r : f.ranks)
        for (const auto& rb : a.ranks)
            if (rb.rank == r) {
                auto it = rb.facts.examples.find(key);
                if (it == rb.facts.examples.end()) continue;
                for (int64_t id : it->second)
                    if (f.eventIds.size() < 10) f.eventIds.push_back(id);
            }
}

std::optional<Finding> exposedCommunication(const Analysis& a) {
    double pct = a.summary.pct(TimeClass::Communication);
    if (pct < kExposedCommPct) return std::nullopt;
    auto exposed = [](const RankBreakdown& r) { return r.ns(TimeClass::Communication); };
    Finding f = makeFinding(a, "exposed-communication", "Communication is exposed (not hidden behind computation)",
                     maxOver(a, exposed),
                     "Overlap communication with computation: start collectives asynchronously "
                     "(non-blocking MPI, async NCCL / DDP gradient bucketing) and wait for them as late as "
                     "possible; make buckets large enough to be bandwidth-bound but early enough to overlap "
                     "the backward pass.");
    f.ranks = topRanks(a, exposed);
    f.evidence = {{"comm.exposed_pct", pct, "pct"},
                  {"comm.overlapped_pct", a.summary.commTotalNs > 0 ? 100.0 * share(a.summary.commOverlappedNs, a.summary.commTotalNs) : 0, "pct"},
                  {"max_rank_exposed_ns", double(maxOver(a, exposed)), "ns"},
                  {"wait_ns", double(a.waits.collectiveWaitNs + a.waits.lateSenderNs + a.waits.lateReceiverNs), "ns"}};
    return f;
}

std::optional<Finding> loadImbalance(const Analysis& a) {
    if (a.ranks.size() < 2 || a.pop.maxUsefulNs == 0 || a.pop.loadBalance >= kLoadBalance) return std::nullopt;
    Finding f = makeFinding(a, "load-imbalance", "Computation is unevenly distributed across ranks",
                     a.pop.maxUsefulNs - a.pop.avgUsefulNs,
                     "Rebalance the work: partition the domain or the data by cost rather than by size, "
                     "use dynamic load balancing, or give the overloaded ranks fewer items.");
    int64_t minUseful = INT64_MAX;
    for (const auto& r : a.ranks) {
        minUseful = std::min(minUseful, r.ns(TimeClass::Compute));
        if (double(r.ns(TimeClass::Compute)) > 1.05 * double(a.pop.avgUsefulNs)) f.ranks.push_back(r.rank);
    }
    f.evidence = {{"pop.load_balance", a.pop.loadBalance, "ratio"},
                  {"max_compute_ns", double(a.pop.maxUsefulNs), "ns"},
                  {"avg_compute_ns", double(a.pop.avgUsefulNs), "ns"},
                  {"min_compute_ns", double(minUseful), "ns"}};
    return f;
}

std::optional<Finding> straggler(const Analysis& a) {
    if (a.waits.stragglers.empty() || a.ranks.size() < 2) return std::nullopt;
    const Straggler& s = a.waits.stragglers.front();
    double perOther = double(s.inflictedWaitNs) / double(a.ranks.size() - 1);
    if (perOther < kStragglerWaitShare * double(a.pop.runtimeNs)) return std::nullopt;
    int64_t maxWait = 0;
    for (const auto& r : a.ranks)
        if (r.rank != s.rank) maxWait = std::max(maxWait, r.waitNs);
    Finding f = makeFinding(a, "straggler", "A rank arrives late and the others wait for it",
                     std::min(maxWait, s.inflictedWaitNs),
                     "Find out why this rank is late: more work (rebalance), a slower node or GPU "
                     "(check its host and clocks), extra I/O or logging on it, or OS noise; consider "
                     "pinning and excluding the slow node.");
    f.ranks = {s.rank};
    f.eventIds = {s.exampleEventId};
    f.evidence = {{"rank", double(s.rank), "count"},
                  {"times_last", double(s.timesLast), "count"},
                  {"instances", double(s.instances), "count"},
                  {"inflicted_wait_ns", double(s.inflictedWaitNs), "ns"},
                  {"max_instance_wait_ns", double(s.maxInflictedNs), "ns"}};
    return f;
}

std::optional<Finding> ioBound(const Analysis& a) {
    double pct = a.summary.pct(TimeClass::Io);
    if (pct < kIoExposedPct) return std::nullopt;
    auto exposed = [](const RankBreakdown& r) { return r.ns(TimeClass::Io); };
    Finding f = makeFinding(a, "io-bound", "Exposed I/O: ranks wait for file reads and writes", maxOver(a, exposed),
                     "Hide or shorten the I/O: stage input to faster (node-local) storage, read with more "
                     "threads or asynchronously and prefetch the next batch, write checkpoints in the "
                     "background, and use fewer, bigger requests.");
    f.ranks = topRanks(a, exposed);
    f.evidence = {{"io.exposed_pct", pct, "pct"},
                  {"io.overlapped_pct", a.summary.ioTotalNs > 0 ? 100.0 * share(a.summary.ioOverlappedNs, a.summary.ioTotalNs) : 0, "pct"},
                  {"max_rank_exposed_ns", double(maxOver(a, exposed)), "ns"}};
    if (!a.topFiles.empty()) f.evidence.push_back({"top_file_ns", double(a.topFiles.front().totalNs), "ns"});
    return f;
}

std::optional<Finding> smallMessages(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        return r.facts.smallCommCalls >= kManyCalls && share(r.facts.smallCommNs, r.windowNs) >= kSmallShare
                   ? r.facts.smallCommNs : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    Finding f = makeFinding(a, "small-messages", "Many small messages or collectives (latency-bound)", maxOver(a, hit),
                     "Aggregate: fuse small collectives into one (gradient bucketing, tensor fusion), pack "
                     "small messages into bigger ones, or replace many point-to-point exchanges by one "
                     "neighbourhood collective.");
    f.ranks = topRanks(a, hit);
    int64_t calls = 0, ns = 0;
    for (const auto& r : a.ranks) {
        calls += r.facts.smallCommCalls;
        ns += r.facts.smallCommNs;
    }
    f.evidence = {{"small_calls", double(calls), "count"}, {"small_calls_ns", double(ns), "ns"},
                  {"threshold_bytes", 65536, "bytes"}};
    addExamples(f, a, "small_comm");
    return f;
}

std::optional<Finding> smallIo(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        return r.facts.smallIoCalls >= kManyCalls && share(r.facts.smallIoNs, r.windowNs) >= kSmallShare
                   ? r.facts.smallIoNs : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    Finding f = makeFinding(a, "small-io", "Many small I/O requests", maxOver(a, hit),
                     "Make requests bigger: buffer writes (or use stdio / a larger buffer), read whole "
                     "blocks or files at once, use collective MPI-IO or an I/O library that aggregates.");
    f.ranks = topRanks(a, hit);
    int64_t calls = 0, ns = 0, bytes = 0, dataCalls = 0;
    for (const auto& r : a.ranks) {
        calls += r.facts.smallIoCalls;
        ns += r.facts.smallIoNs;
        bytes += r.facts.ioBytes;
        dataCalls += r.facts.ioCalls;
    }
    f.evidence = {{"small_requests", double(calls), "count"}, {"small_requests_ns", double(ns), "ns"},
                  {"mean_request_bytes", dataCalls > 0 ? double(bytes) / double(dataCalls) : 0, "bytes"},
                  {"threshold_bytes", 65536, "bytes"}};
    addExamples(f, a, "small_io");
    return f;
}

std::optional<Finding> frequentSync(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        return r.facts.syncCalls >= kManyCalls && share(r.ns(TimeClass::Sync), r.windowNs) >= kSyncShare
                   ? r.ns(TimeClass::Sync) : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    Finding f = makeFinding(a, "frequent-sync", "Frequent synchronization serializes host and device", maxOver(a, hit),
                     "Remove device-wide and stream synchronizations from the loop: synchronize on events "
                     "only where a result is needed, avoid implicit syncs (.item(), printing tensors, "
                     "blocking copies), and let independent work run on other streams.");
    f.ranks = topRanks(a, hit);
    int64_t calls = 0;
    for (const auto& r : a.ranks) calls += r.facts.syncCalls;
    f.evidence = {{"sync_calls", double(calls), "count"},
                  {"sync_exposed_pct", a.summary.pct(TimeClass::Sync), "pct"}};
    addExamples(f, a, "sync");
    return f;
}

std::optional<Finding> gpuIdle(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        return r.gpu && share(r.gpuIdleNs, r.activeNs) >= kGpuIdleShare ? r.gpuIdleNs : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    Finding f = makeFinding(a, "gpu-idle", "GPUs are idle for a large share of the run", maxOver(a, hit),
                     "Keep the GPU fed: overlap data loading and host work with GPU work (more loader "
                     "workers, pinned memory, prefetching to the device), and move host-side "
                     "pre-processing to the GPU.");
    f.ranks = topRanks(a, hit);
    int64_t idle = 0, active = 0, gaps = 0;
    for (const auto& r : a.ranks)
        if (r.gpu) {
            idle += r.gpuIdleNs;
            active += r.activeNs;
            gaps += r.facts.gpuGaps;
        }
    f.evidence = {{"gpu_idle_pct", 100.0 * share(idle, active), "pct"}, {"gpu_gaps", double(gaps), "count"}};
    return f;
}

std::optional<Finding> launchBound(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        const RankFacts& f = r.facts;
        bool manyShort = f.kernels >= kManyCalls && share(f.shortKernels, f.kernels) >= kShortKernelShare;
        bool shortGaps = f.gpuGaps > 0 && share(f.shortGpuGaps, f.gpuGaps) >= 0.5 &&
                         share(f.shortGpuGapNs, f.gpuActiveEnd - f.gpuActiveBegin) >= 0.10;
        return r.gpu && manyShort && shortGaps ? f.shortGpuGapNs : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    Finding f = makeFinding(a, "launch-bound", "Launch-bound: many tiny kernels with gaps between them", maxOver(a, hit),
                     "Reduce launch overhead: capture the step in a CUDA graph, fuse small kernels "
                     "(torch.compile, fused optimizers), and increase the work per kernel (bigger batches).");
    f.ranks = topRanks(a, hit);
    int64_t kernels = 0, shortK = 0, gaps = 0;
    for (const auto& r : a.ranks) {
        kernels += r.facts.kernels;
        shortK += r.facts.shortKernels;
        gaps += r.facts.shortGpuGaps;
    }
    f.evidence = {{"kernels", double(kernels), "count"}, {"short_kernels", double(shortK), "count"},
                  {"short_gaps", double(gaps), "count"}, {"short_kernel_threshold_ns", 10000, "ns"}};
    return f;
}

std::optional<Finding> hostDeviceCopies(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        int64_t ns = std::min(r.windowNs, r.facts.pageableCopyNs + r.facts.syncCopyNs);
        return share(ns, r.windowNs) >= kCopyShare ? ns : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    Finding f = makeFinding(a, "host-device-copies", "Synchronous or pageable host-device copies", maxOver(a, hit),
                     "Use pinned (page-locked) host buffers and cudaMemcpyAsync on a non-default stream "
                     "(pin_memory=True, non_blocking=True in PyTorch) so copies overlap with compute.");
    f.ranks = topRanks(a, hit);
    int64_t pageable = 0, pageableNs = 0, sync = 0, syncNs = 0;
    for (const auto& r : a.ranks) {
        pageable += r.facts.pageableCopies;
        pageableNs += r.facts.pageableCopyNs;
        sync += r.facts.syncCopies;
        syncNs += r.facts.syncCopyNs;
    }
    f.evidence = {{"pageable_copies", double(pageable), "count"}, {"pageable_copy_ns", double(pageableNs), "ns"},
                  {"sync_copies", double(sync), "count"}, {"sync_copy_ns", double(syncNs), "ns"}};
    addExamples(f, a, "pageable_copy");
    addExamples(f, a, "sync_copy");
    return f;
}

std::optional<Finding> fp32Gemm(const Analysis& a) {
    auto hit = [](const RankBreakdown& r) {
        return share(r.facts.fp32GemmNs, r.facts.kernelNs) >= kFp32GemmShare &&
                       share(r.facts.fp32GemmNs, r.windowNs) >= 0.01
                   ? r.facts.fp32GemmNs : 0;
    };
    if (maxOver(a, hit) == 0) return std::nullopt;
    // Tensor cores run FP16/BF16 GEMMs several times faster; halving is a conservative bound.
    Finding f = makeFinding(a, "fp32-gemm", "FP32 matrix multiplications where mixed precision would help",
                     maxOver(a, hit) / 2,
                     "Enable mixed precision (torch.autocast with bf16/fp16, or TF32 for FP32 matmuls: "
                     "torch.backends.cuda.matmul.allow_tf32 = True) so GEMMs run on tensor cores.");
    f.ranks = topRanks(a, hit);
    int64_t n = 0, ns = 0, kernelNs = 0;
    for (const auto& r : a.ranks) {
        n += r.facts.fp32GemmKernels;
        ns += r.facts.fp32GemmNs;
        kernelNs += r.facts.kernelNs;
    }
    f.evidence = {{"fp32_gemm_kernels", double(n), "count"}, {"fp32_gemm_ns", double(ns), "ns"},
                  {"share_of_kernel_time_pct", 100.0 * share(ns, kernelNs), "pct"}};
    addExamples(f, a, "fp32_gemm");
    return f;
}

std::optional<Finding> lowCollectiveBandwidth(const Analysis& a) {
    const double link = a.linkBandwidthBytesPerS;
    auto lost = [link](const RankBreakdown& r) -> int64_t {
        const RankFacts& f = r.facts;
        if (f.largeCollectives < kLargeCollectives || f.largeCollectiveTransferNs <= 0) return 0;
        double achieved = double(f.largeCollectiveBytes) / (double(f.largeCollectiveTransferNs) * 1e-9);
        if (achieved >= kLowBandwidth * link) return 0;
        return f.largeCollectiveTransferNs - int64_t(double(f.largeCollectiveBytes) / link * 1e9);
    };
    if (maxOver(a, lost) == 0) return std::nullopt;
    Finding f = makeFinding(a, "low-collective-bandwidth", "Collectives reach a small fraction of the link bandwidth",
                     maxOver(a, lost),
                     "Check the transport: is NCCL/MPI using the fast interconnect (NCCL_DEBUG=INFO, "
                     "UCX/OFI settings), is GPUDirect RDMA enabled, are ranks placed so that rings stay "
                     "inside nodes? Larger buckets also raise the achieved bandwidth.");
    f.ranks = topRanks(a, lost);
    int64_t bytes = 0, ns = 0, calls = 0;
    for (const auto& r : a.ranks) {
        bytes += r.facts.largeCollectiveBytes;
        ns += r.facts.largeCollectiveTransferNs;
        calls += r.facts.largeCollectives;
    }
    double achieved = ns > 0 ? double(bytes) / (double(ns) * 1e-9) : 0;
    f.evidence = {{"large_collectives", double(calls), "count"},
                  {"achieved_bytes_per_s", achieved, "bytes_per_s"},
                  {"link_bytes_per_s", link, "bytes_per_s"},
                  {"achieved_pct_of_link", 100.0 * achieved / link, "pct"}};
    addExamples(f, a, "large_collective");
    return f;
}

} // namespace

void setGain(Finding& f, const Analysis& a, int64_t gainNs) {
    f.estimatedGainNs = std::max<int64_t>(0, std::min(gainNs, a.pop.runtimeNs));
    f.severity = severityForGain(f.estimatedGainNs, a.pop.runtimeNs);
}

Finding makeFinding(const Analysis& a, const char* id, const char* title, int64_t gainNs,
                    std::string suggestion) {
    Finding f;
    f.id = id;
    f.title = title;
    setGain(f, a, gainNs);
    f.suggestion = std::move(suggestion);
    return f;
}

Severity severityForGain(int64_t gainNs, int64_t runtimeNs) {
    double s = share(gainNs, runtimeNs);
    return s >= 0.20 ? Severity::Critical : s >= 0.05 ? Severity::Warning : Severity::Info;
}

const std::vector<Rule>& ruleCatalog() {
    static const std::vector<Rule> kRules = {
        {"exposed-communication", "Exposed communication", exposedCommunication},
        {"load-imbalance", "Load imbalance", loadImbalance},
        {"straggler", "Straggler rank", straggler},
        {"io-bound", "I/O-bound phases", ioBound},
        {"small-messages", "Many small messages or collectives", smallMessages},
        {"small-io", "Small I/O requests", smallIo},
        {"frequent-sync", "Synchronization that serializes", frequentSync},
        {"gpu-idle", "GPU idle gaps", gpuIdle},
        {"launch-bound", "Launch-bound phases", launchBound},
        {"host-device-copies", "Synchronous or pageable host-device copies", hostDeviceCopies},
        {"fp32-gemm", "FP32 GEMM-heavy kernels", fp32Gemm},
        {"low-collective-bandwidth", "Low achieved collective bandwidth", lowCollectiveBandwidth},
    };
    static const std::vector<Rule> kAll = [] { // + the CPU-counter and RDMA rules
        std::vector<Rule> all = kRules;
        for (auto& r : counterRules()) all.push_back(std::move(r));
        for (auto& r : rdmaRules()) all.push_back(std::move(r));
        return all;
    }();
    return kAll;
}

std::vector<Finding> runRules(const Analysis& analysis) {
    std::vector<Finding> out;
    for (const auto& rule : ruleCatalog())
        if (auto f = rule.evaluate(analysis)) out.push_back(std::move(*f));
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
        return a.estimatedGainNs != b.estimatedGainNs ? a.estimatedGainNs > b.estimatedGainNs : a.id < b.id;
    });
    return out;
}

} // namespace hpcprof::analyzer
