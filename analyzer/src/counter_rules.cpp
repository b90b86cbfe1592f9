// SPDX-License-Identifier: MIT
// Advice rules on CPU counters (docs/advice-rules.md): oversubscription, low IPC in compute
// phases, ranks slowed by sharing cores. They fire only on counted data; a trace without the
// counters a rule needs never fires it.
#include <algorithm>

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/counters.hpp"

namespace hpcprof::analyzer {

namespace {

constexpr double kLowIpc = 0.5;            // below: memory- or latency-bound compute
constexpr double kGoodIpc = 1.0;           // what the gain estimate assumes is reachable
constexpr double kMinComputeShare = 0.2;   // compute must matter for low-ipc to matter
constexpr double kSharedWaitFraction = 0.2; // run-queue wait in compute above: starved
constexpr double kSharedUtilization = 0.7;
constexpr double kSharedInvoluntaryPerS = 100.0;

bool oversubscribed(const HostCounters& h) { return h.cpus > 0 && h.busyThreads > h.cpus; }

std::optional<Finding> oversubscription(const Analysis& a) {
    const HostCounters* worst = nullptr;
    for (const auto& h : a.counters.hosts)
        if (oversubscribed(h) &&
            (!worst || double(h.busyThreads) / double(h.cpus) > double(worst->busyThreads) / double(worst->cpus)))
            worst = &h;
    if (!worst) return std::nullopt;
    // With busy > cpus every busy thread gets cpus/busy of a CPU; fitting would give it all.
    double lost = 1.0 - double(worst->cpus) / double(worst->busyThreads);
    Finding f = makeFinding(a, "oversubscription", "More busy threads than CPUs: ranks wait for a core",
                     int64_t(double(a.pop.runtimeNs) * lost),
                     "Run fewer ranks or threads per node than it has cores (mpirun -np, "
                     "--map-by ppr:N:node, OMP_NUM_THREADS, torch.set_num_threads), bind them "
                     "(--bind-to core) and keep helper threads (data loaders, progress threads) off "
                     "the cores the ranks compute on.");
    double wait = 0;
    int64_t n = 0;
    for (const auto& r : a.counters.ranks)
        if (r.host == worst->host) {
            f.ranks.push_back(r.rank);
            if (r.cpuWaitFraction >= 0) {
                wait += r.cpuWaitFraction;
                ++n;
            }
        }
    f.evidence = {{"busy_threads", double(worst->busyThreads), "count"},
                  {"cpus", double(worst->cpus), "count"},
                  {"ranks_on_host", double(worst->ranks), "count"}};
    if (worst->involuntaryPerS >= 0)
        f.evidence.push_back({"involuntary_switches_per_s", worst->involuntaryPerS, "count"});
    if (n > 0) f.evidence.push_back({"cpu_wait_pct", 100.0 * wait / double(n), "pct"});
    return f;
}

std::optional<Finding> lowIpc(const Analysis& a) {
    Finding f = makeFinding(a, "low-ipc", "Compute phases retire few instructions per cycle", 0,
                     "The compute is memory- or latency-bound: improve locality (blocking/tiling, "
                     "contiguous access, structure-of-arrays), reduce working-set size, prefetch, and "
                     "check NUMA placement (numactl --localalloc, first-touch initialisation).");
    int64_t gain = 0;
    double worstIpc = 1e9;
    for (const auto& r : a.counters.ranks) {
        double ipc = r.computeIpc >= 0 ? r.computeIpc : r.ipc;
        if (ipc < 0 || ipc >= kLowIpc || r.spanNs <= 0) continue;
        if (double(r.computeNs) < kMinComputeShare * double(r.spanNs)) continue;
        f.ranks.push_back(r.rank);
        worstIpc = std::min(worstIpc, ipc);
        gain = std::max(gain, int64_t(double(r.computeNs) * (1.0 - ipc / kGoodIpc)));
    }
    if (f.ranks.empty()) return std::nullopt;
    setGain(f, a, gain);
    f.evidence = {{"min_compute_ipc", worstIpc, "ratio"}, {"threshold_ipc", kLowIpc, "ratio"},
                  {"ranks", double(f.ranks.size()), "count"}};
    return f;
}

std::optional<Finding> sharedCores(const Analysis& a) {
    Finding f = makeFinding(a, "shared-cores", "Ranks compute slowly because they share their cores", 0,
                     "Something else runs on these ranks' cores: other ranks bound to the same core, "
                     "helper threads, or other jobs/daemons. Check the binding (mpirun "
                     "--report-bindings, taskset -p), give each rank its own cores, and move "
                     "background work elsewhere.");
    int64_t gain = 0;
    double worstWait = 0;
    for (const auto& r : a.counters.ranks) {
        bool hostOversubscribed = false;
        for (const auto& h : a.counters.hosts)
            if (h.host == r.host && oversubscribed(h)) hostOversubscribed = true;
        if (hostOversubscribed || r.computeNs <= 0) continue; // the oversubscription rule says it
        double wait = r.computeWaitFraction;
        bool starved = wait >= kSharedWaitFraction ||
                       (r.computeUtilization >= 0 && r.computeUtilization < kSharedUtilization &&
                        r.involuntaryPerS >= kSharedInvoluntaryPerS);
        if (!starved) continue;
        f.ranks.push_back(r.rank);
        double lost = wait >= 0 ? wait : 1.0 - r.computeUtilization;
        worstWait = std::max(worstWait, lost);
        gain = std::max(gain, int64_t(double(r.computeNs) * std::min(1.0, lost)));
    }
    if (f.ranks.empty()) return std::nullopt;
    setGain(f, a, gain);
    f.evidence = {{"max_compute_cpu_wait_pct", 100.0 * worstWait, "pct"},
                  {"ranks", double(f.ranks.size()), "count"}};
    return f;
}

} // namespace

std::vector<Rule> counterRules() {
    return {{"oversubscription", "Oversubscribed CPUs", oversubscription},
            {"low-ipc", "Low IPC compute phases", lowIpc},
            {"shared-cores", "Ranks sharing cores", sharedCores}};
}

} // namespace hpcprof::analyzer
