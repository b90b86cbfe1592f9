// SPDX-License-Identifier: MIT
// Rules from why the GPU idles (gpu_idle_causes.hpp): a GPU that waits for input data (the data
// loader, file reads, a pipe), and one that waits for the host to launch work (host-bound).
#include "advice/rule_spec.hpp"
#include "gpu_idle_section.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinInputShare = 0.10;
constexpr double kMinHostBoundShare = 0.20;

const GpuIdleRank* idleOf(const RankBreakdown& r, const Analysis& a) {
    const GpuIdleSection* g = gpuIdleSection(a);
    if (!g || !r.gpu) return nullptr;
    for (const auto& x : g->ranks)
        if (x.rank == r.rank) return &x;
    return nullptr;
}

using ByCause = std::array<int64_t, kGpuIdleCauseCount>;
int64_t inputNs(const ByCause& c) { return c[size_t(GpuIdleCause::Input)]; }
int64_t hostBoundNs(const ByCause& c) { return c[size_t(GpuIdleCause::Host)] + c[size_t(GpuIdleCause::Launch)]; }

/// A rank's idle time of the causes `ns` picks, when at least `minShare` of its active time.
int64_t causeLoss(const RankBreakdown& r, const Analysis& a, int64_t (*ns)(const ByCause&), double minShare) {
    const GpuIdleRank* g = idleOf(r, a);
    if (!g) return 0;
    const int64_t t = ns(g->byCause);
    return share(t, r.activeNs) >= minShare ? t : 0;
}

int64_t inputWait(const RankBreakdown& r, const Analysis& a) { return causeLoss(r, a, inputNs, kMinInputShare); }
int64_t hostBound(const RankBreakdown& r, const Analysis& a) { return causeLoss(r, a, hostBoundNs, kMinHostBoundShare); }

/// The cause's time over the GPU ranks, as a share of their active time and of their steps.
std::vector<Evidence> causeEvidence(const Analysis& a, const std::string& key, int64_t (*ns)(const ByCause&)) {
    int64_t total = 0, active = 0;
    for (const auto& r : a.ranks)
        if (const GpuIdleRank* x = idleOf(r, a)) {
            total += ns(x->byCause);
            active += r.activeNs;
        }
    std::vector<Evidence> ev = {{key + "_ns", double(total), "ns"},
                                {key + "_pct_of_active", 100.0 * share(total, active), "pct"}};
    const GpuIdleSection* g = gpuIdleSection(a);
    if (!g || g->steps.empty()) return ev;
    int64_t inSteps = 0, stepTime = 0;
    for (const auto& s : g->steps) {
        inSteps += ns(s.byCause);
        stepTime += s.spanNs;
    }
    ev.push_back({key + "_pct_of_steps", 100.0 * share(inSteps, stepTime), "pct"});
    return ev;
}

} // namespace

std::vector<RuleSpec> gpuIdleRules() {
    RuleSpec input;
    input.info = {
        "gpu-waits-for-input", "gpu", "GPUs wait for input data",
        "a GPU rank's GPU is idle while its host waits for input (file reads, a data-loader queue "
        "or pipe, a `DataLoader` range) for ≥ {min_input_share} of the rank's active time",
        "max over ranks of that idle time",
        "Idle time by cause: docs/analysis.md, \"Why the GPU idles\". The evidence gives the share "
        "of the GPU ranks' active time and, with steps, of their step time.",
        "Feed the GPU faster: more data-loader workers (num_workers), prefetching (prefetch_factor, "
        "persistent_workers=True), pinned host memory (pin_memory=True) with non-blocking copies, "
        "and cheaper samples (cache decoded data, decode and augment on the GPU).",
        {"input_wait_ns", "input_wait_pct_of_active", "input_wait_pct_of_steps"},
        {{"min_input_share", kMinInputShare, "share"}}};
    input.loss = inputWait;
    input.evidence = [](const Analysis& a) { return causeEvidence(a, "input_wait", inputNs); };
    input.claims = {TimeClass::Idle, TimeClass::Io, TimeClass::Sync};

    RuleSpec host;
    host.info = {
        "gpu-host-bound", "gpu", "GPUs wait for the host to launch work",
        "a GPU rank's GPU is idle while its host computes or is inside CUDA API calls (nothing "
        "launched is pending) for ≥ {min_host_bound_share} of the rank's active time",
        "max over ranks of that idle time",
        "Causes `host` and `launch` of the idle-time split (docs/analysis.md, \"Why the GPU idles\").",
        "The host is the bottleneck: launch less often with more work each (bigger batches, fused "
        "kernels, torch.compile, CUDA graphs), move host-side work (Python, logging, .item() and "
        "other host reads) off the step, and profile the host code.",
        {"host_bound_ns", "host_bound_pct_of_active", "host_bound_pct_of_steps"},
        {{"min_host_bound_share", kMinHostBoundShare, "share"}}};
    host.loss = hostBound;
    host.evidence = [](const Analysis& a) { return causeEvidence(a, "host_bound", hostBoundNs); };
    host.claims = {TimeClass::Idle};
    return {input, host};
}

} // namespace hpcprof::analyzer::advice
