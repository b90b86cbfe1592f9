// SPDX-License-Identifier: MIT
// Rules about how work is spread over the ranks: load imbalance and stragglers.
#include <algorithm>

#include "rule_spec.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinLoadBalance = 0.90;
constexpr double kListedAboveAverage = 1.05;
constexpr double kMinWaitPerOtherRank = 0.02;

std::optional<Judgement> loadImbalance(const Analysis& a) {
    if (a.ranks.size() < 2 || a.pop.maxUsefulNs == 0 || a.pop.loadBalance >= kMinLoadBalance)
        return std::nullopt;
    Judgement j;
    j.gainNs = a.pop.maxUsefulNs - a.pop.avgUsefulNs;
    int64_t minUseful = INT64_MAX;
    for (const auto& r : a.ranks) {
        minUseful = std::min(minUseful, r.ns(TimeClass::Compute));
        if (double(r.ns(TimeClass::Compute)) > kListedAboveAverage * double(a.pop.avgUsefulNs))
            j.ranks.push_back(r.rank);
    }
    j.evidence = {{"pop.load_balance", a.pop.loadBalance, "ratio"},
                  {"max_compute_ns", double(a.pop.maxUsefulNs), "ns"},
                  {"avg_compute_ns", double(a.pop.avgUsefulNs), "ns"},
                  {"min_compute_ns", double(minUseful), "ns"}};
    return j;
}

std::optional<Judgement> straggler(const Analysis& a) {
    if (a.waits.stragglers.empty() || a.ranks.size() < 2) return std::nullopt;
    const Straggler& s = a.waits.stragglers.front();
    double perOther = double(s.inflictedWaitNs) / double(a.ranks.size() - 1);
    if (perOther < kMinWaitPerOtherRank * double(a.pop.runtimeNs)) return std::nullopt;
    int64_t maxWait = 0;
    for (const auto& r : a.ranks)
        if (r.rank != s.rank) maxWait = std::max(maxWait, r.waitNs);
    Judgement j;
    j.gainNs = std::min(maxWait, s.inflictedWaitNs);
    j.ranks = {s.rank};
    j.eventIds = {s.exampleEventId};
    j.evidence = {{"rank", double(s.rank), "count"},
                  {"times_last", double(s.timesLast), "count"},
                  {"instances", double(s.instances), "count"},
                  {"inflicted_wait_ns", double(s.inflictedWaitNs), "ns"},
                  {"max_instance_wait_ns", double(s.maxInflictedNs), "ns"}};
    return j;
}

} // namespace

std::vector<RuleSpec> balanceRules() {
    RuleSpec imbalance;
    imbalance.info = {
        "load-imbalance", "balance", "Computation is unevenly distributed across ranks",
        "≥ 2 ranks and `pop.load_balance` < {min_load_balance}",
        "max(useful) − avg(useful)",
        "`useful` is the exclusive compute of each rank. Ranks listed: those computing more than "
        "{listed_above_average} × the average.",
        "Rebalance the work: partition the domain or the data by cost rather than by size, "
        "use dynamic load balancing, or give the overloaded ranks fewer items.",
        {"pop.load_balance", "max_compute_ns", "avg_compute_ns", "min_compute_ns"},
        {{"min_load_balance", kMinLoadBalance, "ratio"},
         {"listed_above_average", kListedAboveAverage, "ratio"}}};
    imbalance.judge = loadImbalance;

    RuleSpec late;
    late.info = {
        "straggler", "balance", "A rank arrives late and the others wait for it",
        "the top straggler's inflicted wait divided by the other ranks' count ≥ "
        "{min_wait_per_other_rank} of the runtime `T`",
        "min(its inflicted wait, the largest wait of any other rank)",
        "From the wait states: the rank most others waited for (entered collectives last, sent "
        "late). The example event is its call in the worst instance.",
        "Find out why this rank is late: more work (rebalance), a slower node or GPU "
        "(check its host and clocks), extra I/O or logging on it, or OS noise; consider "
        "pinning and excluding the slow node.",
        {"rank", "times_last", "instances", "inflicted_wait_ns", "max_instance_wait_ns"},
        {{"min_wait_per_other_rank", kMinWaitPerOtherRank, "share"}}};
    late.judge = straggler;
    return {imbalance, late};
}

} // namespace hpcprof::analyzer::advice
