// SPDX-License-Identifier: MIT
// Runs the rule table: the shared steps of every rule (gate, per-rank losses, gain, ranks,
// evidence, examples, severity, wording for the program) are done here once, then the
// findings' exclusive gains, which add up to at most the runtime.
#include <algorithm>
#include <array>
#include <cassert>

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

/// A finding and the time it blames on each rank (by index of Analysis::ranks).
struct Evaluated {
    Finding finding;
    std::vector<int64_t> rankClaimNs;
    const RuleSpec* spec = nullptr;
};

const std::string& suggestionFor(const RuleInfo& info, const std::string& programKind) {
    auto it = info.suggestionFor.find(programKind);
    return it != info.suggestionFor.end() ? it->second : info.suggestion;
}

Finding newFinding(const RuleSpec& spec, const Analysis& a, int64_t gainNs) {
    Finding f;
    f.id = spec.info.id;
    f.title = spec.info.title;
    f.estimatedGainNs = std::max<int64_t>(0, std::min(gainNs, a.pop.runtimeNs));
    f.severity = spec.info.severityFromGain ? severityForGain(f.estimatedGainNs, a.pop.runtimeNs)
                                            : Severity::Warning;
    f.suggestion = suggestionFor(spec.info, a.programKind);
    return f;
}

std::optional<Evaluated> evaluateJudge(const RuleSpec& spec, const Analysis& a) {
    std::optional<Judgement> j = spec.judge(a);
    if (!j) return std::nullopt;
    Evaluated e{newFinding(spec, a, j->gainNs), std::move(j->rankClaimNs), &spec};
    if (e.rankClaimNs.empty()) e.rankClaimNs.assign(a.ranks.size(), e.finding.estimatedGainNs);
    e.finding.ranks = std::move(j->ranks);
    e.finding.evidence = std::move(j->evidence);
    e.finding.eventIds = std::move(j->eventIds);
    return e;
}

std::optional<Evaluated> evaluate(const RuleSpec& spec, const Analysis& a) {
    if (spec.judge) return evaluateJudge(spec, a);
    if (spec.gate && !spec.gate(a)) return std::nullopt;
    auto loss = [&](const RankBreakdown& r) { return spec.loss(r, a); };
    const int64_t worst = maxOver(a, loss);
    if (worst == 0) return std::nullopt;
    Evaluated e{newFinding(spec, a, int64_t(double(worst) * spec.gainScale)), {}, &spec};
    for (const auto& r : a.ranks) {
        const int64_t removed = spec.claim ? std::min(spec.claim(r, a), loss(r)) : loss(r);
        e.rankClaimNs.push_back(int64_t(double(removed) * spec.gainScale));
    }
    Finding& f = e.finding;
    f.ranks = topRanks(a, loss);
    if (spec.evidence) f.evidence = spec.evidence(a);
    for (const char* key : spec.exampleKeys) addExamples(f, a, key);
    return e;
}

/// Rules whose time is no one class draw from the whole window, the least specific classes
/// first, so that the classes the specific rules name stay for them as long as possible.
constexpr TimeClass kWholeWindowOrder[] = {TimeClass::Idle,          TimeClass::Compute,
                                           TimeClass::Memory,        TimeClass::Sync,
                                           TimeClass::Io,            TimeClass::Communication,
                                           TimeClass::Setup};

/// Takes up to `wanted` ns from the classes of one rank's unclaimed time; returns what it took.
int64_t claimOnRank(int64_t wanted, const std::vector<TimeClass>& classes, int64_t* left) {
    int64_t taken = 0;
    auto draw = [&](TimeClass c) {
        const int64_t t = std::min(wanted - taken, left[int(c)]);
        left[int(c)] -= t;
        taken += t;
    };
    if (classes.empty())
        for (TimeClass c : kWholeWindowOrder) draw(c);
    for (TimeClass c : classes) draw(c);
    return taken;
}

/// The exclusive gains, findings taken in order (largest estimated gain first): a finding claims
/// on each rank its blamed time (at most its estimated gain) from what is left of the rank's
/// classes in the part of the window T is measured on; its exclusive gain is the most it claims on one rank, at most what the findings
/// before it left of the runtime. Their sum thus never exceeds the runtime.
void assignExclusiveGains(std::vector<Evaluated>& found, const Analysis& a) {
    // The breakdown of the part of the window the runtime T is measured on (POP metrics).
    const bool whole = a.pop.region == "window";
    std::vector<std::array<int64_t, kTimeClassCount>> left(a.ranks.size());
    for (size_t i = 0; i < a.ranks.size(); ++i) {
        const int64_t* from = whole ? a.ranks[i].exclusive : a.ranks[i].regionExclusive;
        std::copy(from, from + kTimeClassCount, left[i].begin());
    }
    int64_t runtimeLeft = std::max<int64_t>(0, a.pop.runtimeNs);
    for (Evaluated& e : found) {
        int64_t most = 0;
        for (size_t i = 0; i < a.ranks.size() && i < e.rankClaimNs.size(); ++i) {
            const int64_t wanted = std::clamp<int64_t>(e.rankClaimNs[i], 0, e.finding.estimatedGainNs);
            most = std::max(most, claimOnRank(wanted, e.spec->claims, left[i].data()));
        }
        e.finding.exclusiveGainNs = std::min(most, runtimeLeft);
        runtimeLeft -= e.finding.exclusiveGainNs;
    }
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
        for (auto& r : workerRules()) all.push_back(std::move(r));
        for (const auto& family : analysisFamilies())
            for (auto& r : family->rules()) all.push_back(std::move(r));
        return all;
    }();
    return kAll;
}

std::vector<Finding> runRules(const Analysis& analysis) {
    std::vector<Evaluated> found;
    for (const auto& spec : ruleSpecs()) {
        // How work is spread over ranks means nothing for processes that are not ranks.
        if (spec.info.area == "balance" && !analysis.crossRank) continue;
        if (auto e = evaluate(spec, analysis)) found.push_back(std::move(*e));
    }
    std::stable_sort(found.begin(), found.end(), [](const Evaluated& x, const Evaluated& y) {
        const Finding &a = x.finding, &b = y.finding;
        return a.estimatedGainNs != b.estimatedGainNs ? a.estimatedGainNs > b.estimatedGainNs : a.id < b.id;
    });
    assignExclusiveGains(found, analysis);
    std::vector<Finding> out;
    int64_t total = 0;
    for (auto& e : found) {
        total += e.finding.exclusiveGainNs;
        out.push_back(std::move(e.finding));
    }
    assert(total <= std::max<int64_t>(0, analysis.pop.runtimeNs));
    return out;
}

} // namespace hpcprof::analyzer::advice
