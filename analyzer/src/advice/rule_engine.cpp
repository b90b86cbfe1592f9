// SPDX-License-Identifier: MIT
// Runs the rule table: the shared steps of every rule (gate, per-rank losses, gain, ranks,
// evidence, examples, severity) are done here once.
#include <algorithm>

#include "rule_spec.hpp"
#include "family_analysis.hpp"
#include "thresholds.hpp"

namespace hpcprof::analyzer::advice {

namespace {

constexpr size_t kMaxRanksListed = 8;
constexpr size_t kMaxExampleEvents = 10;

/// Ranks with a value > 0, largest first (then by rank), at most kMaxRanksListed.
std::vector<int64_t> topRanks(const Analysis& a, const std::function<int64_t(const RankBreakdown&)>& value) {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (const auto& r : a.ranks)
        if (int64_t x = value(r); x > 0) v.push_back({x, r.rank});
    std::sort(v.begin(), v.end(),
              [](auto& x, auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size() && i < kMaxRanksListed; ++i) out.push_back(v[i].second);
    return out;
}

void addExamples(Finding& f, const Analysis& a, const char* key) {
    for (int64_t r : f.ranks)
        for (const auto& rb : a.ranks)
            if (rb.rank == r) {
                auto it = rb.facts.examples.find(key);
                if (it == rb.facts.examples.end()) continue;
                for (int64_t id : it->second)
                    if (f.eventIds.size() < kMaxExampleEvents) f.eventIds.push_back(id);
            }
}

Finding newFinding(const RuleSpec& spec, const Analysis& a, int64_t gainNs) {
    Finding f;
    f.id = spec.info.id;
    f.title = spec.info.title;
    f.estimatedGainNs = std::max<int64_t>(0, std::min(gainNs, a.pop.runtimeNs));
    f.severity = spec.info.severityFromGain ? severityForGain(f.estimatedGainNs, a.pop.runtimeNs)
                                            : Severity::Warning;
    f.suggestion = spec.info.suggestion;
    return f;
}

std::optional<Finding> evaluate(const RuleSpec& spec, const Analysis& a) {
    if (spec.judge) {
        std::optional<Judgement> j = spec.judge(a);
        if (!j) return std::nullopt;
        Finding f = newFinding(spec, a, j->gainNs);
        f.ranks = std::move(j->ranks);
        f.evidence = std::move(j->evidence);
        f.eventIds = std::move(j->eventIds);
        return f;
    }
    if (spec.gate && !spec.gate(a)) return std::nullopt;
    auto loss = [&](const RankBreakdown& r) { return spec.loss(r, a); };
    const int64_t worst = maxOver(a, loss);
    if (worst == 0) return std::nullopt;
    Finding f = newFinding(spec, a, int64_t(double(worst) * spec.gainScale));
    f.ranks = topRanks(a, loss);
    if (spec.evidence) f.evidence = spec.evidence(a);
    for (const char* key : spec.exampleKeys) addExamples(f, a, key);
    return f;
}

} // namespace

double share(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

int64_t maxOver(const Analysis& a, const std::function<int64_t(const RankBreakdown&)>& value) {
    int64_t m = 0;
    for (const auto& r : a.ranks) m = std::max(m, value(r));
    return m;
}

Severity severityForGain(int64_t gainNs, int64_t runtimeNs) {
    double s = share(gainNs, runtimeNs);
    return s >= threshold::kCriticalGainShare  ? Severity::Critical
           : s >= threshold::kWarningGainShare ? Severity::Warning
                                               : Severity::Info;
}

const std::vector<RuleSpec>& ruleSpecs() {
    static const std::vector<RuleSpec> kAll = [] {
        std::vector<RuleSpec> all;
        for (auto& r : balanceRules()) all.push_back(std::move(r));
        for (const auto& family : analysisFamilies())
            for (auto& r : family->rules()) all.push_back(std::move(r));
        return all;
    }();
    return kAll;
}

std::vector<Finding> runRules(const Analysis& analysis) {
    std::vector<Finding> out;
    for (const auto& spec : ruleSpecs()) {
        // How work is spread over ranks means nothing for processes that are not ranks.
        if (spec.info.area == "balance" && !analysis.crossRank) continue;
        if (auto f = evaluate(spec, analysis)) out.push_back(std::move(*f));
    }
    std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
        return a.estimatedGainNs != b.estimatedGainNs ? a.estimatedGainNs > b.estimatedGainNs : a.id < b.id;
    });
    return out;
}

} // namespace hpcprof::analyzer::advice
