// SPDX-License-Identifier: MIT
// The openmp family's rule: threads of a parallel region that did unequal work (the region lasts
// until its slowest thread is done).
#include <algorithm>

#include "advice/rule_spec.hpp"
#include "openmp_section.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinImbalanceShare = 0.05;

std::optional<Judgement> threadImbalance(const Analysis& a) {
    const OpenMpSection* omp = openMpSection(a);
    if (!omp) return std::nullopt;
    Judgement j;
    std::vector<std::pair<int64_t, int64_t>> hit; // (imbalance, rank)
    int64_t regions = 0, waitNs = 0, worst = 0, worstEvent = 0;
    for (const OpenMpRank& r : omp->ranks) {
        auto rb = std::find_if(a.ranks.begin(), a.ranks.end(), [&](const RankBreakdown& b) { return b.rank == r.rank; });
        if (rb == a.ranks.end() || share(r.imbalanceNs, rb->windowNs) < kMinImbalanceShare) continue;
        hit.push_back({r.imbalanceNs, r.rank});
        regions += r.regions;
        waitNs += r.waitNs;
        if (r.worstImbalanceNs > worst) {
            worst = r.worstImbalanceNs;
            worstEvent = r.worstEventId;
        }
    }
    if (hit.empty()) return std::nullopt;
    std::sort(hit.begin(), hit.end(), [](auto& x, auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
    j.gainNs = hit.front().first;
    for (size_t i = 0; i < hit.size() && i < 8; ++i) j.ranks.push_back(hit[i].second);
    if (worstEvent) j.eventIds = {worstEvent};
    j.evidence = {{"thread_imbalance_ns", double(hit.front().first), "ns"},
                  {"regions", double(regions), "count"},
                  {"thread_wait_ns", double(waitNs), "ns"},
                  {"worst_region_imbalance_ns", double(worst), "ns"}};
    return j;
}

} // namespace

std::vector<RuleSpec> openMpRules() {
    RuleSpec imbalance;
    imbalance.info = {
        "openmp-imbalance", "openmp", "Threads of OpenMP parallel regions do unequal work",
        "in a rank's parallel regions, the busy time of the slowest thread exceeds the threads' "
        "mean by ≥ {min_imbalance_share} of the rank's window (summed over regions)",
        "max over ranks of Σ over regions (max − mean busy time of its threads)",
        "A thread's busy time in a region is its implicit task minus the time it waited in "
        "barriers, taskwait, taskgroup or reductions inside it (OMPT, LLVM's libomp; GCC's "
        "libgomp has no tool interface). The example event is the worst region's omp_parallel.",
        "Spread the work evenly: schedule(dynamic, chunk) or schedule(guided) for loops whose "
        "iterations cost differently, smaller chunks, collapse(2) for short outer loops, nowait "
        "where the next construct does not need every thread; and check the binding "
        "(OMP_PROC_BIND, OMP_PLACES) so no thread shares its core.",
        {"thread_imbalance_ns", "regions", "thread_wait_ns", "worst_region_imbalance_ns"},
        {{"min_imbalance_share", kMinImbalanceShare, "share"}}};
    imbalance.judge = threadImbalance;
    // The region on the rank's reference thread: its waits at the barrier (sync) or its work.
    imbalance.claims = {TimeClass::Sync, TimeClass::Compute};
    return {imbalance};
}

} // namespace hpcprof::analyzer::advice
