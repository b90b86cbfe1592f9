// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/diff.hpp"

#include <cmath>
#include <map>
#include <set>

namespace hpcprof::analyzer {

namespace {

void addRow(AnalysisDiff& d, std::string scope, std::string name, double base, double next, bool higherIsWorse,
            bool isTime) {
    DiffRow r;
    r.scope = std::move(scope);
    r.name = std::move(name);
    r.base = base;
    r.next = next;
    r.delta = next - base;
    r.deltaPct = base != 0 ? 100.0 * r.delta / std::fabs(base) : 0;
    r.higherIsWorse = higherIsWorse;
    const DiffOptions& o = d.options;
    if (isTime) {
        // New time where there was none counts as a regression once above the noise floor.
        r.regression = r.delta > double(o.minDeltaNs) && (base == 0 || r.deltaPct > o.thresholdPct);
    } else {
        r.regression = higherIsWorse ? r.delta > o.efficiencyDrop : -r.delta > o.efficiencyDrop;
    }
    if (r.regression) ++d.regressions;
    d.rows.push_back(std::move(r));
}

/// The last row is shown but never a regression: MPI start-up and shutdown vary from run to
/// run with the launcher and the machine's load, not with the program.
void informOnly(AnalysisDiff& d) {
    if (!d.rows.back().regression) return;
    d.rows.back().regression = false;
    --d.regressions;
}

void diffTop(AnalysisDiff& d, const char* scope, const std::vector<TopItem>& base, const std::vector<TopItem>& next) {
    std::map<std::string, std::pair<double, double>> m;
    for (const auto& t : base) m[t.name].first = double(t.totalNs);
    for (const auto& t : next) m[t.name].second = double(t.totalNs);
    for (const auto& [name, v] : m) addRow(d, scope, name, v.first, v.second, true, true);
}

} // namespace

AnalysisDiff diffAnalyses(const Analysis& base, const Analysis& next, const DiffOptions& options) {
    AnalysisDiff d;
    d.options = options;
    d.basePath = base.tracePath;
    d.newPath = next.tracePath;
    addRow(d, "summary", "wall_ns", double(base.summary.wallNs), double(next.summary.wallNs), true, true);
    d.wallDeltaPct = d.rows.back().deltaPct;
    for (int c = 0; c < kTimeClassCount; ++c) {
        addRow(d, "class", timeClassName(TimeClass(c)), double(base.summary.exclusive[c]),
               double(next.summary.exclusive[c]), true, true);
        if (c == int(TimeClass::Setup)) informOnly(d);
    }
    addRow(d, "pop", "load_balance", base.pop.loadBalance, next.pop.loadBalance, false, false);
    addRow(d, "pop", "communication_efficiency", base.pop.communicationEfficiency,
           next.pop.communicationEfficiency, false, false);
    addRow(d, "pop", "parallel_efficiency", base.pop.parallelEfficiency, next.pop.parallelEfficiency, false, false);
    std::map<int64_t, std::pair<const RankBreakdown*, const RankBreakdown*>> ranks;
    for (const auto& r : base.ranks) ranks[r.rank].first = &r;
    for (const auto& r : next.ranks) ranks[r.rank].second = &r;
    for (const auto& [rank, p] : ranks)
        for (int c = 0; c < kTimeClassCount; ++c) {
            double b = p.first ? double(p.first->exclusive[c]) : 0, n = p.second ? double(p.second->exclusive[c]) : 0;
            if (b == 0 && n == 0) continue;
            addRow(d, "rank", "rank " + std::to_string(rank) + " " + timeClassName(TimeClass(c)), b, n, true, true);
            if (c == int(TimeClass::Setup)) informOnly(d);
        }
    diffTop(d, "kernel", base.topKernels, next.topKernels);
    diffTop(d, "collective", base.topCollectives, next.topCollectives);
    diffTop(d, "file", base.topFiles, next.topFiles);
    return d;
}

} // namespace hpcprof::analyzer
