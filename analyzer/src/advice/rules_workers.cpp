// SPDX-License-Identifier: MIT
// The core's rule about a rank (or main process) that waits for the worker processes it started:
// data-loader workers, a process pool, forked helpers. The waits are those the process-roles
// analysis credits to each worker (process_waits.cpp): waitpid for it, reads of and poll/select
// on a pipe or socket it wrote to.
#include <algorithm>

#include "rule_spec.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr double kMinWorkerWaitShare = 0.10;

struct WorkerWait {
    int64_t ns = 0, calls = 0, workers = 0;
};

WorkerWait waitsOf(const RankBreakdown& r, const Analysis& a) {
    WorkerWait w;
    for (const auto& p : a.processes)
        if (p.role == ProcessRole::Worker && p.unit && *p.unit == r.rank && p.waitedForNs > 0) {
            w.ns += p.waitedForNs;
            w.calls += p.waitedForCalls;
            ++w.workers;
        }
    return w;
}

/// The rank's waits for its workers, at most its blocked time (several threads of it may wait
/// at once; only its own timeline's io and sync can be given back).
int64_t workerWaitTime(const RankBreakdown& r, const Analysis&) {
    const int64_t blocked = r.ns(TimeClass::Sync) + r.ns(TimeClass::Io);
    const int64_t waited = std::min(r.workerWaitNs, blocked);
    return share(waited, r.windowNs) >= kMinWorkerWaitShare ? waited : 0;
}

std::vector<Evidence> workerWaitEvidence(const Analysis& a) {
    WorkerWait total;
    int64_t window = 0;
    for (const auto& r : a.ranks) {
        const WorkerWait w = waitsOf(r, a);
        total.ns += w.ns;
        total.calls += w.calls;
        total.workers += w.workers;
        if (w.ns > 0) window += r.windowNs;
    }
    return {{"worker_wait_ns", double(total.ns), "ns"},
            {"worker_wait_pct", 100.0 * share(total.ns, window), "pct"},
            {"worker_wait_calls", double(total.calls), "count"},
            {"workers_waited_for", double(total.workers), "count"}};
}

} // namespace

std::vector<RuleSpec> workerRules() {
    RuleSpec waits;
    waits.info = {
        "waits-for-workers", "processes", "Ranks wait for their worker processes",
        "a rank (or main process) spends ≥ {min_worker_wait_share} of its window blocked waiting "
        "for the workers it started",
        "max over ranks of the time blocked waiting for its workers",
        "The waits credited to a worker (the `parent waited` column of the processes table): its "
        "parent's `waitpid`/`wait4` that reaped it, and the parent's reads of, and `poll`/`select` "
        "on, a pipe or socket the worker wrote to. Bounded by the rank's own io + sync time.",
        "The workers do not keep up: start more of them, give them smaller pieces of work, or "
        "overlap the wait with work the rank can do meanwhile.",
        {"worker_wait_ns", "worker_wait_pct", "worker_wait_calls", "workers_waited_for"},
        {{"min_worker_wait_share", kMinWorkerWaitShare, "share"}}};
    waits.info.suggestionFor = {
        {"data_parallel", "The data loader does not keep up with the step: raise the DataLoader's "
                          "num_workers and prefetch_factor, keep workers alive between epochs "
                          "(persistent_workers), make per-sample work cheaper (cache decoded "
                          "data, move augmentation to the GPU)."},
        {"mpi", "The rank's helper processes do not keep up: start more of them or give them "
                "smaller pieces, and overlap the wait with the rank's own work."},
        {"processes", "The workers do not keep up: start more of them (for a PyTorch DataLoader, "
                      "raise num_workers and prefetch_factor), give them smaller pieces, or "
                      "overlap the wait with work the main process can do meanwhile."}};
    waits.loss = workerWaitTime;
    waits.evidence = workerWaitEvidence;
    waits.claims = {TimeClass::Sync, TimeClass::Io};
    return {waits};
}

} // namespace hpcprof::analyzer::advice
