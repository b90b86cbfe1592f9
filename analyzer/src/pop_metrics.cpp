// SPDX-License-Identifier: MIT
#include "pop_metrics.hpp"

#include <algorithm>
#include <map>

namespace hpcprof::analyzer {

PopMetrics computePop(std::vector<RankBreakdown>& ranks, const WaitStates& waits) {
    PopMetrics p;
    if (ranks.empty()) return p;
    std::map<int64_t, int64_t> waitOf;
    for (const auto& w : waits.perRank) waitOf[w.rank] = w.total();
    int64_t sumUseful = 0, minTransfer = INT64_MAX;
    for (auto& r : ranks) {
        r.waitNs = waitOf.count(r.rank) ? waitOf[r.rank] : 0;
        r.transferNs = std::max<int64_t>(0, r.ns(TimeClass::Communication) - r.waitNs);
        int64_t useful = r.ns(TimeClass::Compute);
        sumUseful += useful;
        p.maxUsefulNs = std::max(p.maxUsefulNs, useful);
        p.runtimeNs = std::max(p.runtimeNs, r.windowNs);
        minTransfer = std::min(minTransfer, r.transferNs);
    }
    p.avgUsefulNs = sumUseful / int64_t(ranks.size());
    // Ideal network: transfers take no time, waits for late partners remain. Every rank's
    // timeline would shrink by its own transfer time, so the run by the least-shrinking rank's.
    int64_t ideal = 0;
    for (const auto& r : ranks) ideal = std::max(ideal, r.windowNs - r.transferNs);
    p.idealRuntimeNs = ideal;
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    p.loadBalance = ratio(double(sumUseful) / double(ranks.size()), double(p.maxUsefulNs));
    p.serialisationEfficiency = ratio(double(p.maxUsefulNs), double(p.idealRuntimeNs));
    p.transferEfficiency = ratio(double(p.idealRuntimeNs), double(p.runtimeNs));
    p.communicationEfficiency = ratio(double(p.maxUsefulNs), double(p.runtimeNs));
    p.parallelEfficiency = ratio(double(sumUseful) / double(ranks.size()), double(p.runtimeNs));
    (void)minTransfer;
    return p;
}

} // namespace hpcprof::analyzer
