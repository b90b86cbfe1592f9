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
    std::vector<int64_t> rankComputeClaimNs; ///< Judgement::rankComputeClaimNs
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
    Evaluated e{newFinding(spec, a, j->gainNs), std::move(j->rankClaimNs), &spec, {}};
    if (e.rankClaimNs.empty()) e.rankClaimNs.assign(a.ranks.size(), e.finding.estimatedGainNs);
    e.finding.ranks = std::move(j->ranks);
    e.finding.evidence = std::move(j->evidence);
    e.finding.eventIds = std::move(j->eventIds);
    e.rankComputeClaimNs = std::move(j->rankComputeClaimNs);
    return e;
}

std::optional<Evaluated> evaluate(const RuleSpec& spec, const Analysis& a) {
    if (spec.judge) return evaluateJudge(spec, a);
    if (spec.gate && !spec.gate(a)) return std::nullopt;
    auto loss = [&](const RankBreakdown& r) { return spec.loss(r, a); };
    const int64_t worst = maxOver(a, loss);
    if (worst == 0) return std::nullopt;
    Evaluated e{newFinding(spec, a, int64_t(double(worst) * spec.gainScale)), {}, &spec, {}};
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

/// What is left on one rank for the findings to claim: its time classes, communication less
/// its wait for late partners, and that wait apart (kCommWait), so that a rule about transfers
/// and a rule about waiting never claim the same communication.
constexpr size_t kCommWait = kTimeClassCount;
using RankPools = std::array<int64_t, kTimeClassCount + 1>;

RankPools poolsOf(const RankBreakdown& r, bool wholeWindow) {
    RankPools pools{};
    const int64_t* from = wholeWindow ? r.exclusive : r.regionExclusive;
    std::copy(from, from + kTimeClassCount, pools.begin());
    const int64_t wait = std::clamp<int64_t>(r.waitNs, 0, pools[size_t(TimeClass::Communication)]);
    pools[size_t(TimeClass::Communication)] -= wait;
    pools[kCommWait] = wait;
    return pools;
}

/// Takes up to `wanted` ns from the classes of one rank's unclaimed time; returns what it took.
int64_t claimOnRank(int64_t wanted, const RuleSpec& spec, RankPools& left) {
    int64_t taken = 0;
    auto drawPool = [&](size_t pool) {
        const int64_t t = std::min(wanted - taken, left[pool]);
        left[pool] -= t;
        taken += t;
    };
    auto draw = [&](TimeClass c) {
        if (c != TimeClass::Communication) return drawPool(size_t(c));
        if (spec.commPart != RuleSpec::CommPart::Transfer) drawPool(kCommWait);
        if (spec.commPart != RuleSpec::CommPart::Wait) drawPool(size_t(c));
    };
    if (spec.claims.empty())
        for (TimeClass c : kWholeWindowOrder) draw(c);
    for (TimeClass c : spec.claims) draw(c);
    return taken;
}

/// The exclusive gains, findings taken in order (root causes, then largest estimated gain
/// first): a finding claims on each rank its blamed time (at most its estimated gain) from what
/// is left of the rank's classes in the part of the window T is measured on; its exclusive gain
/// is the most it claims on one rank, at most what the findings before it left of the runtime
/// less the compute nobody claimed. Their sum thus never exceeds the runtime.
void assignExclusiveGains(std::vector<Evaluated>& found, const Analysis& a) {
    // The breakdown of the part of the window the runtime T is measured on (POP metrics).
    const bool whole = a.pop.region == "window";
    std::vector<RankPools> left;
    for (const auto& r : a.ranks) left.push_back(poolsOf(r, whole));
    std::vector<int64_t> most(found.size(), 0);
    int64_t movedCompute = 0; // claimed by findings whose change moves it to other ranks
    for (size_t k = 0; k < found.size(); ++k) {
        const Evaluated& e = found[k];
        for (size_t i = 0; i < a.ranks.size() && i < e.rankClaimNs.size(); ++i) {
            const int64_t wanted = std::clamp<int64_t>(e.rankClaimNs[i], 0, e.finding.estimatedGainNs);
            int64_t taken = claimOnRank(wanted, *e.spec, left[i]);
            if (i < e.rankComputeClaimNs.size()) {
                int64_t& compute = left[i][size_t(TimeClass::Compute)];
                const int64_t t = std::clamp<int64_t>(e.rankComputeClaimNs[i], 0, compute);
                compute -= t;
                taken += t;
                if (e.spec->computeMoves) movedCompute += t;
            }
            most[k] = std::max(most[k], std::min(taken, e.finding.estimatedGainNs));
        }
    }
    // The compute no finding removes stays: even spread evenly over the ranks it takes its
    // average, so the findings together leave at least that of T (without this floor, findings
    // that each save most on a different rank added up to the whole run). Work a finding moves
    // (a straggler's excess, rebalanced) is still done somewhere: it stays in the floor.
    int64_t computeLeft = movedCompute;
    for (const RankPools& p : left) computeLeft += p[size_t(TimeClass::Compute)];
    if (!left.empty()) computeLeft /= int64_t(left.size());
    int64_t runtimeLeft = std::max<int64_t>(0, a.pop.runtimeNs - computeLeft);
    for (size_t k = 0; k < found.size(); ++k) {
        found[k].finding.exclusiveGainNs = std::min(most[k], runtimeLeft);
        runtimeLeft -= found[k].finding.exclusiveGainNs;
    }
}

} // namespace

double share(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

int64_t maxOver(const Analysis& a, const std::function<int64_t(const RankBreakdown&)>& value) {
    int64_t m = 0;
    for (const auto& r : a.ranks) m = std::max(m, value(r));
    return m;
}

int64_t usefulNs(const RankBreakdown& r, const Analysis& a) {
    return a.pop.region == "window" ? r.ns(TimeClass::Compute) : r.regionExclusive[int(TimeClass::Compute)];
}

const RankBreakdown* rankBreakdownOf(const Analysis& a, int64_t rank) {
    for (const auto& r : a.ranks)
        if (r.rank == rank) return &r;
    return nullptr;
}

std::vector<int64_t> computeShareClaims(const Analysis& a, const std::map<int64_t, double>& shareByRank,
                                        int64_t capNs) {
    std::vector<int64_t> claims;
    for (const auto& r : a.ranks) {
        auto it = shareByRank.find(r.rank);
        const double s = it == shareByRank.end() ? 0.0 : std::clamp(it->second, 0.0, 1.0);
        claims.push_back(std::min(capNs, int64_t(s * double(usefulNs(r, a)))));
    }
    return claims;
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
        if (x.spec->rootCause != y.spec->rootCause) return x.spec->rootCause;
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
