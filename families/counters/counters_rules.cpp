// SPDX-License-Identifier: MIT
// Rules about CPU counters (docs/counters.md): oversubscription, low IPC in compute phases,
// ranks slowed by sharing cores. They fire only on counted data; a trace without the counters a
// rule needs never fires it.
#include <algorithm>
#include <map>

#include "advice/rule_spec.hpp"
#include "thresholds.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kLowIpc = 0.5;              // below: memory- or latency-bound compute
constexpr double kReachableIpc = 1.0;        // what the gain estimate assumes is reachable
constexpr double kMinComputeShare = 0.2;     // compute must matter for low-ipc to matter
constexpr double kStarvedWaitShare = 0.2;    // run-queue wait in compute above: starved
constexpr double kStarvedUtilization = 0.7;
constexpr double kStarvedInvoluntaryPerS = 100.0;

bool oversubscribed(const HostCounters& h) { return h.cpus > 0 && h.busyThreads > h.cpus; }

/// What ranks get back in their calls when they stop waiting for a CPU, by index of
/// Analysis::ranks: the share of the transfer part of their communication their calls spent
/// waiting for a core (rank -> share; a call that polls, as MPI does in shared memory, stays
/// runnable, so on a starved host most of a "transfer" is that wait, which no overlap of
/// communication with computation removes), at most `capNs`. Not the wait for late partners the
/// wait states measured: that part is the straggler's or the imbalance's.
std::vector<int64_t> transferWaitClaims(const Analysis& a, const std::map<int64_t, double>& callsWait, int64_t capNs) {
    std::vector<int64_t> claims;
    for (const auto& r : a.ranks) {
        auto it = callsWait.find(r.rank);
        claims.push_back(it == callsWait.end() ? 0 : std::min(capNs, int64_t(it->second * double(r.transferNs))));
    }
    return claims;
}

std::optional<Judgement> oversubscription(const Analysis& a) {
    const HostCounters* worst = nullptr;
    for (const auto& h : a.counters.hosts)
        if (oversubscribed(h) &&
            (!worst || double(h.busyThreads) / double(h.cpus) > double(worst->busyThreads) / double(worst->cpus)))
            worst = &h;
    if (!worst) return std::nullopt;
    // With busy > cpus every busy thread gets cpus/busy of a CPU; fitting would give it all.
    double lost = 1.0 - double(worst->cpus) / double(worst->busyThreads);
    Judgement j;
    j.gainNs = int64_t(double(a.pop.runtimeNs) * lost);
    double wait = 0;
    int64_t n = 0;
    // What fitting the threads to the CPUs surely gives back on a rank: the time it spent
    // waiting for a CPU, in its compute and in the transfer part of its calls
    // (transferWaitClaims). Not T x (1 - CPUs / busy) on every rank: that let the finding claim
    // compute done on a CPU, which no placement removes (4 LAMMPS ranks on 2 cores: the
    // findings claimed the whole run).
    std::map<int64_t, double> computeWait, callsWait;
    for (const auto& r : a.counters.ranks)
        if (r.host == worst->host) {
            j.ranks.push_back(r.rank);
            if (r.cpuWaitFraction >= 0) {
                wait += r.cpuWaitFraction;
                ++n;
            }
            if (r.computeWaitFraction >= 0) computeWait[r.rank] = r.computeWaitFraction;
            if (r.callsWaitFraction >= 0) callsWait[r.rank] = r.callsWaitFraction;
        }
    j.rankComputeClaimNs = computeShareClaims(a, computeWait, j.gainNs);
    j.rankClaimNs = transferWaitClaims(a, callsWait, j.gainNs);
    j.evidence = {{"busy_threads", double(worst->busyThreads), "count"},
                  {"cpus", double(worst->cpus), "count"},
                  {"ranks_on_host", double(worst->ranks), "count"}};
    if (worst->involuntaryPerS >= 0)
        j.evidence.push_back({"involuntary_switches_per_s", worst->involuntaryPerS, "count"});
    if (n > 0) j.evidence.push_back({"cpu_wait_pct", 100.0 * wait / double(n), "pct"});
    return j;
}

std::optional<Judgement> lowIpc(const Analysis& a) {
    Judgement j;
    std::map<int64_t, double> saved; // rank -> share of its compute a reachable IPC saves
    double worstIpc = 1e9;
    for (const auto& r : a.counters.ranks) {
        double ipc = r.computeIpc >= 0 ? r.computeIpc : r.ipc;
        if (ipc < 0 || ipc >= kLowIpc || r.spanNs <= 0) continue;
        if (double(r.computeNs) < kMinComputeShare * double(r.spanNs)) continue;
        j.ranks.push_back(r.rank);
        worstIpc = std::min(worstIpc, ipc);
        j.gainNs = std::max(j.gainNs, int64_t(double(r.computeNs) * (1.0 - ipc / kReachableIpc)));
        saved[r.rank] = 1.0 - ipc / kReachableIpc;
    }
    if (j.ranks.empty()) return std::nullopt;
    j.rankClaimNs = computeShareClaims(a, saved, j.gainNs);
    j.evidence = {{"min_compute_ipc", worstIpc, "ratio"}, {"threshold_ipc", kLowIpc, "ratio"},
                  {"ranks", double(j.ranks.size()), "count"}};
    return j;
}

bool onOversubscribedHost(const Analysis& a, const RankCounters& r) {
    for (const auto& h : a.counters.hosts)
        if (h.host == r.host && oversubscribed(h)) return true;
    return false;
}

/// A rank whose compute waits for its core: measured run-queue wait, or (without it) little of
/// a CPU while often preempted.
bool starved(const RankCounters& r) {
    return r.computeWaitFraction >= kStarvedWaitShare ||
           (r.computeUtilization >= 0 && r.computeUtilization < kStarvedUtilization &&
            r.involuntaryPerS >= kStarvedInvoluntaryPerS);
}

std::optional<Judgement> sharedCores(const Analysis& a) {
    Judgement j;
    std::map<int64_t, double> saved;     // rank -> share of its compute spent waiting for a CPU
    std::map<int64_t, double> callsWait; // rank -> share of its calls spent waiting for a CPU
    double worstWait = 0;
    for (const auto& r : a.counters.ranks) {
        // An oversubscribed host is the oversubscription rule's.
        if (onOversubscribedHost(a, r) || r.computeNs <= 0 || !starved(r)) continue;
        j.ranks.push_back(r.rank);
        const double lost = r.computeWaitFraction >= 0 ? r.computeWaitFraction : 1.0 - r.computeUtilization;
        worstWait = std::max(worstWait, lost);
        const RankBreakdown* b = rankBreakdownOf(a, r.rank);
        const double calls = r.callsWaitFraction >= 0 && b ? r.callsWaitFraction * double(b->transferNs) : 0;
        j.gainNs = std::max(j.gainNs, int64_t(double(r.computeNs) * std::min(1.0, lost) + calls));
        saved[r.rank] = lost;
        if (r.callsWaitFraction >= 0) callsWait[r.rank] = r.callsWaitFraction;
    }
    if (j.ranks.empty()) return std::nullopt;
    j.rankComputeClaimNs = computeShareClaims(a, saved, j.gainNs);
    j.rankClaimNs = transferWaitClaims(a, callsWait, j.gainNs);
    j.evidence = {{"max_compute_cpu_wait_pct", 100.0 * worstWait, "pct"},
                  {"ranks", double(j.ranks.size()), "count"}};
    return j;
}

RuleSpec oversubscriptionRule() {
    RuleSpec over;
    over.info = {
        "oversubscription", "counters", "More busy threads than CPUs: ranks wait for a core",
        "on a host, more busy threads than online CPUs: threads sampled for ≥ {min_busy_span_ns} "
        "and ≥ {min_busy_span_share} of their process's longest-sampled thread "
        "whose on-CPU + run-queue wait is ≥ {busy_demand} of their sampled time (without "
        "run-queue wait: on-CPU ≥ {busy_demand}, or preempted ≥ {busy_involuntary_per_s} times/s "
        "and more often than they blocked)",
        "`T` × (1 − CPUs / busy threads)",
        "Uses the counter analysis ([counters.md](counters.md)); never fires on traces without "
        "the counters it needs.",
        "Run fewer ranks or threads per node than it has cores (mpirun -np, "
        "--map-by ppr:N:node, OMP_NUM_THREADS, torch.set_num_threads), bind them "
        "(--bind-to core) and keep helper threads (data loaders, progress threads) off "
        "the cores the ranks compute on.",
        {"busy_threads", "cpus", "ranks_on_host", "involuntary_switches_per_s", "cpu_wait_pct"},
        {{"busy_demand", threshold::kBusyDemand, "share"},
         {"min_busy_span_ns", double(threshold::kMinBusySpanNs), "ns"},
         {"min_busy_span_share", threshold::kMinBusySpanShare, "share"},
         {"busy_involuntary_per_s", threshold::kBusyInvoluntaryPerS, "per_s"}}};
    over.judge = oversubscription;
    // The compute part is claimed through Judgement::rankComputeClaimNs, the rest here.
    over.claims = {TimeClass::Communication};
    over.claimsCompute = true;
    over.commPart = RuleSpec::CommPart::Transfer;
    over.rootCause = true;
    return over;
}

RuleSpec lowIpcRule() {
    RuleSpec ipc;
    ipc.info = {
        "low-ipc", "counters", "Compute phases retire few instructions per cycle",
        "a rank's compute-phase IPC (PAPI_TOT_INS / PAPI_TOT_CYC) < {low_ipc} and its compute "
        "phase is ≥ {min_compute_share} of its sampled time",
        "max over ranks of compute time × (1 − IPC / {reachable_ipc})",
        "Needs PAPI's instruction and cycle counters (a hardware PMU).",
        "The compute is memory- or latency-bound: improve locality (blocking/tiling, "
        "contiguous access, structure-of-arrays), reduce working-set size, prefetch, and "
        "check NUMA placement (numactl --localalloc, first-touch initialisation).",
        {"min_compute_ipc", "threshold_ipc", "ranks"},
        {{"low_ipc", kLowIpc, "ratio"},
         {"min_compute_share", kMinComputeShare, "share"},
         {"reachable_ipc", kReachableIpc, "ratio"}}};
    ipc.judge = lowIpc;
    ipc.claims = {TimeClass::Compute};
    return ipc;
}

RuleSpec sharedCoresRule() {
    RuleSpec shared;
    shared.info = {
        "shared-cores", "counters", "Ranks compute slowly because they share their cores",
        "on a host that is not oversubscribed, a rank's compute phase waits ≥ "
        "{starved_wait_share} for a CPU (or uses < {starved_utilization} of one while preempted "
        "≥ {starved_involuntary_per_s} times/s)",
        "max over ranks of compute time × its wait share + the transfer part of its "
        "communication × its calls' wait share",
        "Hosts that are oversubscribed are left to the oversubscription rule. A call that polls "
        "(MPI in shared memory) stays runnable: the share of it spent waiting for a core is this "
        "rule's, not exposed-communication's.",
        "Something else runs on these ranks' cores: other ranks bound to the same core, "
        "helper threads, or other jobs/daemons. Check the binding (mpirun "
        "--report-bindings, taskset -p), give each rank its own cores, and move "
        "background work elsewhere.",
        {"max_compute_cpu_wait_pct", "ranks"},
        {{"starved_wait_share", kStarvedWaitShare, "share"},
         {"starved_utilization", kStarvedUtilization, "share"},
         {"starved_involuntary_per_s", kStarvedInvoluntaryPerS, "per_s"}}};
    shared.judge = sharedCores;
    // The compute part is claimed through Judgement::rankComputeClaimNs, the rest here.
    shared.claims = {TimeClass::Communication};
    shared.claimsCompute = true;
    shared.commPart = RuleSpec::CommPart::Transfer;
    shared.rootCause = true; // like oversubscription: waiting for a core stretches all the rest
    return shared;
}

} // namespace

std::vector<RuleSpec> counterRules() { return {oversubscriptionRule(), lowIpcRule(), sharedCoresRule()}; }

} // namespace hpcprof::analyzer::advice
