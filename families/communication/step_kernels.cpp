// SPDX-License-Identifier: MIT
#include "step_kernels.hpp"

#include <algorithm>

#include "wait_states.hpp"

namespace hpcprof::analyzer {

namespace {

/// A kernel at least this share of its step is "long" (the last of those marks where the rank
/// reached the step's exchange; tiny trailing kernels do not).
constexpr double kLongKernelShare = 0.05;
/// Kernels of one exchange end together: within this much, or this share of the shortest.
constexpr int64_t kEndToleranceNs = 50'000;
constexpr double kEndToleranceShare = 0.02;

int64_t syntheticCommunicator(int64_t nameId) { return -2 - nameId; }

struct Ranked {
    int64_t rank;
    const CommKernel* k;
};

/// The kernels of `kernels` (sorted by ts) that start in [begin, end).
std::pair<size_t, size_t> inStep(const std::vector<CommKernel>& kernels, const RankStep& st) {
    auto first = std::lower_bound(kernels.begin(), kernels.end(), st.begin,
                                  [](const CommKernel& k, int64_t t) { return k.ts < t; });
    auto last = std::lower_bound(first, kernels.end(), st.end, [](const CommKernel& k, int64_t t) { return k.ts < t; });
    return {size_t(first - kernels.begin()), size_t(last - kernels.begin())};
}

} // namespace

std::vector<CollectiveCall> commKernelInstances(const std::map<int64_t, std::vector<CommKernel>>& byRank) {
    std::map<int64_t, std::vector<Ranked>> byName;
    for (const auto& [rank, kernels] : byRank)
        for (const CommKernel& k : kernels) byName[k.nameId].push_back({rank, &k});
    std::vector<CollectiveCall> out;
    int64_t seq = 0;
    for (auto& [name, ks] : byName) {
        std::sort(ks.begin(), ks.end(), [](const Ranked& a, const Ranked& b) { return a.k->end < b.k->end; });
        for (size_t i = 0; i < ks.size();) {
            // Grow the group while the next kernel ends close to the group's first end and comes
            // from a rank not in it yet.
            size_t j = i + 1;
            int64_t shortest = ks[i].k->end - ks[i].k->ts;
            std::vector<int64_t> ranks = {ks[i].rank};
            while (j < ks.size() && std::find(ranks.begin(), ranks.end(), ks[j].rank) == ranks.end()) {
                shortest = std::min(shortest, ks[j].k->end - ks[j].k->ts);
                const int64_t tolerance = std::max(kEndToleranceNs, int64_t(kEndToleranceShare * double(shortest)));
                if (ks[j].k->end - ks[i].k->end > tolerance) break;
                ranks.push_back(ks[j].rank);
                ++j;
            }
            if (j - i >= 2) {
                for (size_t m = i; m < j; ++m)
                    out.push_back({ks[m].rank, syntheticCommunicator(name), seq, ks[m].k->ts, ks[m].k->end, -1, name,
                                   ks[m].k->eventId});
                ++seq;
            }
            i = j;
        }
    }
    return out;
}

/// The step of `rank` whose range holds `ts`, -1 when none.
int64_t stepOf(const StepStats& steps, int64_t rank, int64_t ts) {
    for (const RankSteps& rs : steps.ranks) {
        if (rs.rank != rank) continue;
        for (size_t i = 0; i < rs.steps.size(); ++i)
            if (ts >= rs.steps[i].begin && ts < rs.steps[i].end) return int64_t(i);
    }
    return -1;
}

namespace {

/// Step -> rank -> the wait the rank's late starts cost the others in that step (the wait at
/// N x N of wait_states.hpp, per instance).
std::map<int64_t, std::map<int64_t, int64_t>> inflictedBySteps(std::vector<CollectiveCall> calls,
                                                               const StepStats& steps) {
    sortByInstance(calls);
    std::map<int64_t, std::map<int64_t, int64_t>> inflicted;
    for (size_t i = 0; i < calls.size();) {
        const size_t j = instanceEnd(calls, i);
        const InstanceBlame b = blameOf(calls, i, j);
        const CollectiveCall& last = calls[b.last];
        if (const int64_t step = stepOf(steps, last.rank, last.ts); step >= 0) inflicted[step][last.rank] += b.waitNs;
        i = j;
    }
    return inflicted;
}

/// Where the last long kernel of `kernels` that starts in `st` starts, as a share of the step.
double commStartFraction(const std::vector<CommKernel>& kernels, const RankStep& st) {
    const auto [a, b] = inStep(kernels, st);
    const int64_t dur = st.end - st.begin;
    if (a == b || dur <= 0) return -1;
    size_t mark = b - 1;
    for (size_t x = b; x-- > a;)
        if (double(kernels[x].end - kernels[x].ts) >= kLongKernelShare * double(dur)) {
            mark = x;
            break;
        }
    return double(kernels[mark].ts - st.begin) / double(dur);
}

} // namespace

void annotateStepStragglers(const std::vector<CollectiveCall>& instances,
                            const std::map<int64_t, std::vector<CommKernel>>& byRank, StepStats& steps) {
    const auto inflicted = inflictedBySteps(instances, steps);
    for (Step& st : steps.steps) {
        auto it = inflicted.find(st.index);
        if (it == inflicted.end()) continue;
        for (const auto& [rank, ns] : it->second)
            if (ns > st.stragglerWaitNs) {
                st.stragglerWaitNs = ns;
                st.stragglerRank = rank;
            }
    }
    for (RankSteps& rs : steps.ranks)
        if (auto k = byRank.find(rs.rank); k != byRank.end())
            for (RankStep& st : rs.steps) st.commStartFraction = commStartFraction(k->second, st);
}

} // namespace hpcprof::analyzer
