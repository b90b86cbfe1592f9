// SPDX-License-Identifier: MIT
// Rules about GPUs: synchronizations, idle GPUs, launch-bound phases, host-device copies, FP32
// GEMMs.
#include <algorithm>

#include "advice/rule_spec.hpp"
#include "gpu_idle_section.hpp"
#include "thresholds.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr int64_t kMinSyncCalls = 100;
constexpr double kMinSyncShare = 0.05;
constexpr double kMinGpuIdleShare = 0.20;
constexpr int64_t kMinKernels = 100;
constexpr double kMinShortKernelShare = 0.5;
constexpr double kMinShortGapShare = 0.5;
constexpr double kMinShortGapSpanShare = 0.10;
constexpr double kMinCopyShare = 0.01;
constexpr double kMinFp32GemmKernelShare = 0.10;
constexpr double kMinFp32GemmWindowShare = 0.01;
/// Tensor cores run FP16/BF16/TF32 GEMMs several times faster; halving is a conservative bound.
constexpr double kFp32GemmGainShare = 0.5;
using threshold::kShortGpuGapNs;
using threshold::kShortKernelNs;

int64_t syncTime(const RankBreakdown& r, const Analysis&) {
    return r.facts.syncCalls >= kMinSyncCalls && share(r.ns(TimeClass::Sync), r.windowNs) >= kMinSyncShare
               ? r.ns(TimeClass::Sync)
               : 0;
}

std::vector<Evidence> syncEvidence(const Analysis& a) {
    int64_t calls = 0;
    for (const auto& r : a.ranks) calls += r.facts.syncCalls;
    return {{"sync_calls", double(calls), "count"},
            {"sync_exposed_pct", a.summary.pct(TimeClass::Sync), "pct"}};
}

int64_t gpuIdleTime(const RankBreakdown& r, const Analysis&) {
    return r.gpu && share(r.gpuIdleNs, r.activeNs) >= kMinGpuIdleShare ? r.gpuIdleNs : 0;
}

std::vector<Evidence> gpuIdleEvidence(const Analysis& a) {
    int64_t idle = 0, active = 0, gaps = 0;
    for (const auto& r : a.ranks)
        if (r.gpu) {
            idle += r.gpuIdleNs;
            active += r.activeNs;
            gaps += r.facts.gpuGaps;
        }
    std::vector<Evidence> ev = {{"gpu_idle_pct", 100.0 * share(idle, active), "pct"},
                                {"gpu_gaps", double(gaps), "count"}};
    // Why: each cause's share of the idle time (gpu_idle_section.hpp), largest first.
    if (const GpuIdleSection* g = gpuIdleSection(a)) {
        std::array<int64_t, kGpuIdleCauseCount> byCause{};
        for (const auto& r : g->ranks)
            for (int c = 0; c < kGpuIdleCauseCount; ++c) byCause[size_t(c)] += r.byCause[size_t(c)];
        for (GpuIdleCause c : causesByTime(byCause))
            ev.push_back({std::string("idle_") + gpuIdleCauseName(c) + "_pct", 100.0 * share(byCause[size_t(c)], idle),
                          "pct"});
    }
    return ev;
}

int64_t launchGapTime(const RankBreakdown& r, const Analysis&) {
    const RankFacts& f = r.facts;
    bool manyShort = f.kernels >= kMinKernels && share(f.shortKernels, f.kernels) >= kMinShortKernelShare;
    bool shortGaps = f.gpuGaps > 0 && share(f.shortGpuGaps, f.gpuGaps) >= kMinShortGapShare &&
                     share(f.shortGpuGapNs, f.gpuActiveEnd - f.gpuActiveBegin) >= kMinShortGapSpanShare;
    return r.gpu && manyShort && shortGaps ? f.shortGpuGapNs : 0;
}

std::vector<Evidence> launchEvidence(const Analysis& a) {
    int64_t kernels = 0, shortK = 0, gaps = 0;
    for (const auto& r : a.ranks) {
        kernels += r.facts.kernels;
        shortK += r.facts.shortKernels;
        gaps += r.facts.shortGpuGaps;
    }
    return {{"kernels", double(kernels), "count"}, {"short_kernels", double(shortK), "count"},
            {"short_gaps", double(gaps), "count"},
            {"short_kernel_threshold_ns", double(kShortKernelNs), "ns"}};
}

int64_t copyTime(const RankBreakdown& r, const Analysis&) {
    int64_t ns = std::min(r.windowNs, r.facts.pageableCopyNs + r.facts.syncCopyNs);
    return share(ns, r.windowNs) >= kMinCopyShare ? ns : 0;
}

std::vector<Evidence> copyEvidence(const Analysis& a) {
    int64_t pageable = 0, pageableNs = 0, sync = 0, syncNs = 0;
    for (const auto& r : a.ranks) {
        pageable += r.facts.pageableCopies;
        pageableNs += r.facts.pageableCopyNs;
        sync += r.facts.syncCopies;
        syncNs += r.facts.syncCopyNs;
    }
    return {{"pageable_copies", double(pageable), "count"}, {"pageable_copy_ns", double(pageableNs), "ns"},
            {"sync_copies", double(sync), "count"}, {"sync_copy_ns", double(syncNs), "ns"}};
}

int64_t fp32GemmTime(const RankBreakdown& r, const Analysis&) {
    const RankFacts& f = r.facts;
    return share(f.fp32GemmNs, f.kernelNs) >= kMinFp32GemmKernelShare &&
                   share(f.fp32GemmNs, r.windowNs) >= kMinFp32GemmWindowShare
               ? f.fp32GemmNs
               : 0;
}

std::vector<Evidence> fp32GemmEvidence(const Analysis& a) {
    int64_t n = 0, ns = 0, kernelNs = 0;
    for (const auto& r : a.ranks) {
        n += r.facts.fp32GemmKernels;
        ns += r.facts.fp32GemmNs;
        kernelNs += r.facts.kernelNs;
    }
    return {{"fp32_gemm_kernels", double(n), "count"}, {"fp32_gemm_ns", double(ns), "ns"},
            {"share_of_kernel_time_pct", 100.0 * share(ns, kernelNs), "pct"}};
}

RuleSpec frequentSyncRule() {
    RuleSpec sync;
    sync.info = {
        "frequent-sync", "gpu", "Frequent synchronization serializes host and device",
        "a rank makes ≥ {min_sync_calls} sync calls and exposed sync is ≥ {min_sync_share} of "
        "its window",
        "max over ranks of exposed sync",
        "Class `sync` (`gpu_sync`: device, stream and event synchronizations).",
        "Remove device-wide and stream synchronizations from the loop: synchronize on events "
        "only where a result is needed, avoid implicit syncs (.item(), printing tensors, "
        "blocking copies), and let independent work run on other streams.",
        {"sync_calls", "sync_exposed_pct"},
        {{"min_sync_calls", double(kMinSyncCalls), "count"}, {"min_sync_share", kMinSyncShare, "share"}}};
    sync.loss = syncTime;
    sync.claims = {TimeClass::Sync};
    sync.evidence = syncEvidence;
    sync.exampleKeys = {"sync"};
    return sync;
}

RuleSpec gpuIdleRule() {
    RuleSpec idle;
    idle.info = {
        "gpu-idle", "gpu", "GPUs are idle for a large share of the run",
        "a GPU rank's GPU is idle (no kernel, copy or sync at all) ≥ {min_gpu_idle_share} of its "
        "active time",
        "max over ranks of GPU idle time",
        "Uses the GPU reference timeline. The evidence gives the idle share over all GPU ranks, "
        "the number of gaps and each cause's share of the idle time (`idle_input_pct`, "
        "`idle_host_pct`, ...: docs/analysis.md, \"Why the GPU idles\"); the rules "
        "gpu-waits-for-input and gpu-host-bound name the causes that have a remedy of their own.",
        "Look at what the GPU waits for (the idle causes in the evidence): feed it faster when it "
        "waits for input (data-loader workers, pinned memory, prefetching), launch more work per "
        "call when it waits for the host (bigger batches, fused kernels, CUDA graphs), and find "
        "the dependency when launched kernels wait (kernel_wait: another stream, an event, a "
        "collective's peer).",
        {"gpu_idle_pct", "gpu_gaps", "idle_<cause>_pct"},
        {{"min_gpu_idle_share", kMinGpuIdleShare, "share"}}};
    idle.loss = gpuIdleTime;
    idle.evidence = gpuIdleEvidence;
    return idle;
}

RuleSpec launchBoundRule() {
    RuleSpec launch;
    launch.info = {
        "launch-bound", "gpu", "Launch-bound: many tiny kernels with gaps between them",
        "a GPU rank runs ≥ {min_kernels} kernels, ≥ {min_short_kernel_share} of them shorter than "
        "{short_kernel_ns}, ≥ {min_short_gap_share} of its GPU gaps are shorter than "
        "{short_gap_ns} and those short gaps are ≥ {min_short_gap_span_share} of the GPU's active "
        "span",
        "max over ranks of the short-gap time",
        "Many tiny kernels separated by short gaps: the GPU waits for launches.",
        "Reduce launch overhead: capture the step in a CUDA graph, fuse small kernels "
        "(torch.compile, fused optimizers), and increase the work per kernel (bigger batches).",
        {"kernels", "short_kernels", "short_gaps", "short_kernel_threshold_ns"},
        {{"min_kernels", double(kMinKernels), "count"},
         {"min_short_kernel_share", kMinShortKernelShare, "share"},
         {"short_kernel_ns", double(kShortKernelNs), "ns"},
         {"min_short_gap_share", kMinShortGapShare, "share"},
         {"short_gap_ns", double(kShortGpuGapNs), "ns"},
         {"min_short_gap_span_share", kMinShortGapSpanShare, "share"}}};
    launch.loss = launchGapTime;
    launch.evidence = launchEvidence;
    return launch;
}

RuleSpec hostDeviceCopiesRule() {
    RuleSpec copies;
    copies.info = {
        "host-device-copies", "gpu", "Synchronous or pageable host-device copies",
        "pageable copies (`gpu_memcpy` with `src_kind` or `dst_kind` = `pageable`) plus blocking "
        "copy API calls (`cudaMemcpy*`/`cuMemcpy*` without `Async`) take ≥ {min_copy_share} of a "
        "rank's window",
        "max over ranks of that time",
        "Copy direction and memory kinds come from the `event_arg` keys `copy_kind`, `src_kind`, "
        "`dst_kind`.",
        "Use pinned (page-locked) host buffers and cudaMemcpyAsync on a non-default stream "
        "(pin_memory=True, non_blocking=True in PyTorch) so copies overlap with compute.",
        {"pageable_copies", "pageable_copy_ns", "sync_copies", "sync_copy_ns"},
        {{"min_copy_share", kMinCopyShare, "share"}}};
    copies.loss = copyTime;
    copies.evidence = copyEvidence;
    copies.exampleKeys = {"pageable_copy", "sync_copy"};
    return copies;
}

RuleSpec fp32GemmRule() {
    RuleSpec gemm;
    gemm.info = {
        "fp32-gemm", "gpu", "FP32 matrix multiplications where mixed precision would help",
        "FP32 GEMM kernels take ≥ {min_fp32_gemm_kernel_share} of a rank's kernel time and ≥ "
        "{min_fp32_gemm_window_share} of its window",
        "{fp32_gemm_gain_share} of their time (tensor cores run FP16/BF16/TF32 GEMMs at least "
        "twice as fast)",
        "Kernel names are classified by the GEMM libraries' naming, never by a word anywhere in "
        "the name. FP32 GEMMs on the CUDA cores: cuBLAS tiles `<arch>_sgemm_*` (`ampere_sgemm_"
        "128x64_nn`, `volta_sgemm_*`) and `sgemm_*` (`sgemm_largek_lds64`), CUTLASS "
        "`*_simt_sgemm_*`, xmma GEMMs with FP32 math (`sm80_xmma_gemm_f32f32_f32f32_*`, `ffma`), "
        "cublasLt `gemm*<float, ...>` (`gemmSN_TN_kernel<float, ...>`) and MAGMA `magma*_sgemm*`. "
        "Not counted: tensor-core GEMMs (`tensorop`, `wmma`, MMA shapes `h884`, `s1688` (TF32 "
        "from FP32 data), `s16816`, `i8816`, xmma with tf32/f16/bf16/fp8 math, Hopper's "
        "`nvjet_*`); FP64, complex and half-precision CUDA-core GEMMs; matrix-vector and k=1 "
        "products (`gemv*`, `gemmk1`: bound by memory, tensor cores would not help); kernels "
        "that only mention `gemm` or `float` (FBGEMM's `fbgemm_gpu::*` and `split_embedding_*` "
        "kernels, elementwise kernels of float); Triton and cuDNN kernels, whose names do not "
        "give the GEMM's precision.",
        "Enable mixed precision (torch.autocast with bf16/fp16, or TF32 for FP32 matmuls: "
        "torch.backends.cuda.matmul.allow_tf32 = True) so GEMMs run on tensor cores.",
        {"fp32_gemm_kernels", "fp32_gemm_ns", "share_of_kernel_time_pct"},
        {{"min_fp32_gemm_kernel_share", kMinFp32GemmKernelShare, "share"},
         {"min_fp32_gemm_window_share", kMinFp32GemmWindowShare, "share"},
         {"fp32_gemm_gain_share", kFp32GemmGainShare, "share"}}};
    gemm.loss = fp32GemmTime;
    gemm.gainScale = kFp32GemmGainShare;
    gemm.evidence = fp32GemmEvidence;
    gemm.exampleKeys = {"fp32_gemm"};
    return gemm;
}

} // namespace

std::vector<RuleSpec> gpuIdleRules(); // gpu_idle_rules.cpp

std::vector<RuleSpec> gpuRules() {
    std::vector<RuleSpec> rules = {frequentSyncRule(), gpuIdleRule(), launchBoundRule(), hostDeviceCopiesRule(),
                                   fp32GemmRule()};
    for (auto& r : gpuIdleRules()) rules.push_back(std::move(r));
    return rules;
}

} // namespace hpcprof::analyzer::advice
