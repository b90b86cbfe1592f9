// SPDX-License-Identifier: MIT
// The core's rule about how work is spread over the ranks: load imbalance (the rules of the
// data families are in their folders, families/<name>/<name>_rules.cpp).
#include <algorithm>

#include "rule_spec.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinLoadBalance = 0.90;
constexpr double kListedAboveAverage = 1.05;

std::optional<Judgement> loadImbalance(const Analysis& a) {
    if (a.ranks.size() < 2 || a.pop.maxUsefulNs == 0 || a.pop.loadBalance >= kMinLoadBalance)
        return std::nullopt;
    Judgement j;
    j.gainNs = a.pop.maxUsefulNs - a.pop.avgUsefulNs;
    // The minimum and the listed ranks from the same useful time as POP's maximum and average
    // (between MPI_Init and MPI_Finalize when the ranks have them), not from the whole run's.
    int64_t minUseful = INT64_MAX;
    for (const auto& r : a.ranks) {
        const int64_t useful = usefulNs(r, a);
        minUseful = std::min(minUseful, useful);
        if (double(useful) > kListedAboveAverage * double(a.pop.avgUsefulNs)) j.ranks.push_back(r.rank);
        // What rebalancing saves a rank is its wait for the slowest one, at most the gain.
        j.rankClaimNs.push_back(std::min(j.gainNs, a.pop.maxUsefulNs - useful));
    }
    j.evidence = {{"pop.load_balance", a.pop.loadBalance, "ratio"},
                  {"max_compute_ns", double(a.pop.maxUsefulNs), "ns"},
                  {"avg_compute_ns", double(a.pop.avgUsefulNs), "ns"},
                  {"min_compute_ns", double(minUseful), "ns"}};
    return j;
}

} // namespace

std::vector<RuleSpec> balanceRules() {
    RuleSpec imbalance;
    imbalance.info = {
        "load-imbalance", "balance", "Computation is unevenly distributed across ranks",
        "≥ 2 ranks with a rank source (`cross_rank`) and `pop.load_balance` < {min_load_balance}",
        "max(useful) − avg(useful)",
        "`useful` is the exclusive compute of each rank in POP's region (`pop.region`): between "
        "MPI_Init and MPI_Finalize when the ranks call them, the whole window otherwise; "
        "`max_compute_ns`, `avg_compute_ns` and `min_compute_ns` are its maximum, average and "
        "minimum. Ranks listed: those computing more than {listed_above_average} × the average.",
        "Rebalance the work: partition the domain or the data by cost rather than by size, "
        "use dynamic load balancing, or give the overloaded ranks fewer items.",
        {"pop.load_balance", "max_compute_ns", "avg_compute_ns", "min_compute_ns"},
        {{"min_load_balance", kMinLoadBalance, "ratio"},
         {"listed_above_average", kListedAboveAverage, "ratio"}}};
    imbalance.info.suggestionFor = {
        {"mpi", "Rebalance the work across ranks: partition the domain by cost rather than by "
                "size (weighted graph or space-filling-curve partitioning), or balance "
                "dynamically; the listed ranks compute the most, the others wait for them in MPI."},
        {"data_parallel", "Give every rank the same work per step: equal per-rank batch sizes, "
                          "bucket or pad samples of varying length, and run data loading, "
                          "evaluation and logging on all ranks alike (or off the step)."},
        {"processes", "Split the work into more, smaller tasks handed out on demand (a work "
                      "queue or pool) instead of a fixed share per process."}};
    imbalance.judge = loadImbalance;
    imbalance.claims = {TimeClass::Communication, TimeClass::Sync, TimeClass::Idle};
    imbalance.commPart = RuleSpec::CommPart::Wait;

    return {imbalance};
}

} // namespace hpcprof::analyzer::advice
