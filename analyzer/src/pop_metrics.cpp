// SPDX-License-Identifier: MIT
#include "pop_metrics.hpp"

#include <algorithm>
#include <map>

namespace hpcprof::analyzer {

namespace {

/// One rank as the POP model sees it: its runtime, useful computation and exposed
/// communication, on the region between MPI_Init and MPI_Finalize or on the whole window.
struct PopRank {
    int64_t windowNs = 0, usefulNs = 0, transferNs = 0;
};

PopRank popRank(const RankBreakdown& r, bool wholeWindow) {
    PopRank p;
    p.windowNs = wholeWindow ? r.windowNs : r.regionNs;
    p.usefulNs = wholeWindow ? r.ns(TimeClass::Compute) : r.regionExclusive[int(TimeClass::Compute)];
    const int64_t comm = wholeWindow ? r.ns(TimeClass::Communication) : r.regionExclusive[int(TimeClass::Communication)];
    p.transferNs = std::max<int64_t>(0, comm - r.waitNs);
    return p;
}

/// True when some rank's region is narrower than its window (it has MPI_Init or MPI_Finalize).
bool anyRegion(const std::vector<RankBreakdown>& ranks) {
    return std::any_of(ranks.begin(), ranks.end(), [](const RankBreakdown& r) { return r.regionNs < r.windowNs; });
}

} // namespace

PopMetrics computePop(std::vector<RankBreakdown>& ranks, const WaitStates& waits, bool includeSetup) {
    PopMetrics p;
    if (ranks.empty()) return p;
    std::map<int64_t, int64_t> waitOf;
    for (const auto& w : waits.perRank) waitOf[w.rank] = w.total();
    for (auto& r : ranks) {
        r.waitNs = waitOf.count(r.rank) ? waitOf[r.rank] : 0;
        r.transferNs = std::max<int64_t>(0, r.ns(TimeClass::Communication) - r.waitNs);
    }
    const bool whole = includeSetup || !anyRegion(ranks);
    p.region = whole ? "window" : "init_to_finalize";
    int64_t sumUseful = 0, ideal = 0;
    for (const auto& r : ranks) {
        const PopRank pr = popRank(r, whole);
        sumUseful += pr.usefulNs;
        p.maxUsefulNs = std::max(p.maxUsefulNs, pr.usefulNs);
        p.runtimeNs = std::max(p.runtimeNs, pr.windowNs);
        // Ideal network: transfers take no time, waits for late partners remain. Every rank's
        // timeline would shrink by its own transfer time, so the run by the least-shrinking
        // rank's.
        ideal = std::max(ideal, pr.windowNs - pr.transferNs);
    }
    p.avgUsefulNs = sumUseful / int64_t(ranks.size());
    p.idealRuntimeNs = ideal;
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    p.loadBalance = ratio(double(sumUseful) / double(ranks.size()), double(p.maxUsefulNs));
    p.serialisationEfficiency = ratio(double(p.maxUsefulNs), double(p.idealRuntimeNs));
    p.transferEfficiency = ratio(double(p.idealRuntimeNs), double(p.runtimeNs));
    p.communicationEfficiency = ratio(double(p.maxUsefulNs), double(p.runtimeNs));
    p.parallelEfficiency = ratio(double(sumUseful) / double(ranks.size()), double(p.runtimeNs));
    return p;
}

} // namespace hpcprof::analyzer
