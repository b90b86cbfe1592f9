// SPDX-License-Identifier: MIT
#include "steps.hpp"

#include "forward_search.hpp"
#include "sort_unless_sorted.hpp"

#include <climits>
#include <cstdint>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

namespace hpcprof::analyzer {

std::string stepFamilyName(const std::string& name) {
    size_t n = name.size();
    while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9') --n;
    return name.substr(0, n);
}

void summarizeSteps(StepStats& s) {
    if (s.steps.empty()) return;
    double sum = 0;
    s.minNs = INT64_MAX;
    s.maxNs = 0;
    for (const auto& st : s.steps) {
        sum += double(st.durNs);
        s.minNs = std::min(s.minNs, st.durNs);
        s.maxNs = std::max(s.maxNs, st.durNs);
    }
    double mean = sum / double(s.steps.size());
    double var = 0;
    for (const auto& st : s.steps) var += (double(st.durNs) - mean) * (double(st.durNs) - mean);
    var /= double(s.steps.size());
    s.meanNs = int64_t(std::llround(mean));
    s.stddevNs = int64_t(std::llround(std::sqrt(var)));
    s.cv = mean > 0 ? std::sqrt(var) / mean : 0;
}

namespace {

/// Population statistics of one rank's step durations.
void summarizeRank(RankSteps& r) {
    if (r.steps.empty()) return;
    double sum = 0;
    r.minNs = INT64_MAX;
    r.maxNs = 0;
    for (const auto& st : r.steps) {
        sum += double(st.durNs());
        r.minNs = std::min(r.minNs, st.durNs());
        r.maxNs = std::max(r.maxNs, st.durNs());
    }
    const double mean = sum / double(r.steps.size());
    double var = 0;
    for (const auto& st : r.steps) var += (double(st.durNs()) - mean) * (double(st.durNs()) - mean);
    r.meanNs = int64_t(std::llround(mean));
    r.stddevNs = int64_t(std::llround(std::sqrt(var / double(r.steps.size()))));
}

/// Keeps the `n` slowest of the rank's steps (of equal durations the earlier), by index.
void keepSlowest(RankSteps& r, size_t n) {
    if (r.steps.size() <= n) return;
    // The n slowest, of equal durations the earlier steps: a selection, not a sort of all the
    // rank's steps (that sort was 3 % of a report with 230 k steps per rank).
    std::nth_element(r.steps.begin(), r.steps.begin() + std::ptrdiff_t(n), r.steps.end(),
                     [](const RankStep& a, const RankStep& b) {
                         return a.durNs() != b.durNs() ? a.durNs() > b.durNs() : a.index < b.index;
                     });
    r.steps.resize(n);
    std::sort(r.steps.begin(), r.steps.end(), [](const RankStep& a, const RankStep& b) { return a.index < b.index; });
    r.steps.shrink_to_fit();
}

/// The steps of the job, built rank by rank (ranks in rank order, each rank's steps by start):
/// step i spans every rank's step i, its duration is the slowest rank's. A rank's list is
/// dropped to its slowest steps once the job's rank-steps pass `limit`, so that what is held is
/// the job's steps and one rank's, not every rank's.
class StepBuilder {
public:
    StepBuilder(size_t limit, size_t slowest) : m_limit(limit), m_slowest(slowest) {}

    void addRank(int64_t rank, const std::vector<Interval>& steps) {
        if (steps.empty()) return;
        RankSteps rs;
        rs.rank = rank;
        rs.count = int64_t(steps.size());
        rs.steps.reserve(steps.size()); // one per rank and step: no growth slack
        for (size_t i = 0; i < steps.size(); ++i) {
            RankStep one;
            one.index = int64_t(i);
            one.begin = steps[i].begin;
            one.end = steps[i].end;
            rs.steps.push_back(one);
            if (i == m_span.size()) m_span.push_back({INT64_MAX, INT64_MIN, INT64_MAX, 0});
            Span& sp = m_span[i];
            const int64_t d = steps[i].end - steps[i].begin;
            sp = {std::min(sp.begin, steps[i].begin), std::max(sp.end, steps[i].end), std::min(sp.minDur, d),
                  std::max(sp.maxDur, d)};
        }
        summarizeRank(rs);
        m_rankSteps += steps.size();
        m_s.ranks.push_back(std::move(rs));
        if (m_rankSteps <= m_limit) return;
        m_s.slowestPerRank = int64_t(m_slowest);
        for (RankSteps& r : m_s.ranks) keepSlowest(r, m_slowest);
    }

    StepStats finish(std::string source) {
        if (m_span.empty()) return {};
        m_s.source = std::move(source);
        for (size_t i = 0; i < m_span.size(); ++i) {
            Step st;
            st.index = int64_t(i);
            st.begin = m_span[i].begin;
            st.end = m_span[i].end;
            st.durNs = m_span[i].maxDur;
            st.spreadNs = m_span[i].maxDur - m_span[i].minDur;
            m_s.steps.push_back(st);
        }
        summarizeSteps(m_s);
        m_s.rankSteps = int64_t(m_rankSteps);
        m_s.rankStepLimit = m_limit;
        return std::move(m_s);
    }

private:
    struct Span {
        int64_t begin, end, minDur, maxDur;
    };
    size_t m_limit, m_slowest;
    size_t m_rankSteps = 0;
    std::vector<Span> m_span; ///< by step
    StepStats m_s;
};

} // namespace

void limitRankSteps(StepStats& s, size_t limit, size_t slowest) {
    int64_t n = 0;
    for (const RankSteps& r : s.ranks) n += r.count;
    s.rankSteps = n;
    s.rankStepLimit = limit;
    if (uint64_t(n) <= limit) return;
    s.slowestPerRank = int64_t(slowest);
    for (RankSteps& r : s.ranks) keepSlowest(r, slowest);
}

StepStats stepsFromRanges(const std::map<int64_t, std::vector<Interval>>& rangesByRank,
                          const std::string& name) {
    StepBuilder b(SIZE_MAX, 0); // kept whole: the pass adds their breakdown (limitRankSteps after)
    for (const auto& [r, v] : rangesByRank) {
        auto sorted = v;
        std::sort(sorted.begin(), sorted.end(),
                  [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
        b.addRank(r, sorted);
    }
    return b.finish("range:" + name);
}

namespace {

/// The leader's calls (the lowest rank's: its run in scan order, then its calls in `extra`) by
/// start.
Result<std::vector<CollectiveCall>> leaderCalls(const detail::CollectiveRuns& runs,
                                                const std::vector<CollectiveCall>& extra, int64_t leader) {
    std::vector<detail::RunCall> run;
    HPCPROF_RETURN_IF_ERROR(runs.readRank(leader, run));
    std::sort(run.begin(), run.end(), [](const auto& a, const auto& b) { return a.position < b.position; });
    std::vector<CollectiveCall> calls;
    for (const auto& c : run) calls.push_back(c.call);
    for (const auto& c : extra)
        if (c.rank == leader) calls.push_back(c);
    std::vector<const CollectiveCall*> byStart;
    for (const auto& c : calls) byStart.push_back(&c);
    std::sort(byStart.begin(), byStart.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
    std::vector<CollectiveCall> out;
    out.reserve(byStart.size());
    for (const auto* c : byStart) out.push_back(*c);
    return out;
}

/// The smallest period with which the leader's names and communicators repeat (0: none);
/// searched over a bounded prefix: O(limit * maxPeriod).
size_t patternPeriod(const std::vector<CollectiveCall>& lead) {
    const size_t n = std::min<size_t>(lead.size(), 20000);
    const size_t maxPeriod = std::min<size_t>(512, n / 3);
    for (size_t p = 1; p <= maxPeriod; ++p) {
        bool ok = true;
        for (size_t i = 0; i + p < n && ok; ++i)
            ok = lead[i].nameId == lead[i + p].nameId && lead[i].communicatorId == lead[i + p].communicatorId;
        if (ok) return p;
    }
    return 0;
}

/// The boundary instances (communicator, seq) and their step index, sorted by instance, one
/// entry per instance (a rank's run is sorted by instance: looked up by a forward search, not a
/// map look-up per call, which was 3 % of a report of generated jobs).
class Boundaries {
public:
    using Instance = std::pair<int64_t, int64_t>;
    /// Each boundary instance's step (of two calls of one instance, the later step).
    explicit Boundaries(const std::map<Instance, size_t>& steps) : m_sorted(steps.begin(), steps.end()) {}
    /// A search for keys that mostly increase (one per sequence of calls).
    auto search() const {
        auto less = [](const std::pair<Instance, size_t>& e, const Instance& key) { return e.first < key; };
        return ForwardSearch<std::pair<Instance, size_t>, decltype(less)>(m_sorted, less);
    }
    /// The step of `instance` given search()'s answer for it, or nullopt.
    std::optional<size_t> at(size_t i, const Instance& instance) const {
        if (i < m_sorted.size() && m_sorted[i].first == instance) return m_sorted[i].second;
        return std::nullopt;
    }

private:
    std::vector<std::pair<Instance, size_t>> m_sorted;
};

/// One rank's steps: the starts of its calls of the boundary instances (its run, then its calls
/// in `extra`), by step (of two calls in one instance the later counts); consecutive boundaries
/// make a step, up to the first one missing.
std::vector<Interval> rankCollectiveSteps(const std::vector<detail::RunCall>& run,
                                          const std::vector<const CollectiveCall*>& extra, const Boundaries& boundary) {
    std::vector<std::pair<size_t, int64_t>> starts; // (step, start)
    auto add = [&](auto& search, const CollectiveCall& c) {
        const Boundaries::Instance instance{c.communicatorId, c.seq};
        if (auto step = boundary.at(search.lowerBound(instance), instance)) starts.emplace_back(*step, c.ts);
    };
    auto inRun = boundary.search(), inExtra = boundary.search();
    for (const auto& c : run) add(inRun, c.call);
    for (const auto* c : extra) add(inExtra, *c);
    sortUnlessSorted(starts, [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<size_t, int64_t>> steps;
    for (const auto& st : starts) {
        if (!steps.empty() && steps.back().first == st.first) steps.back().second = st.second;
        else steps.push_back(st);
    }
    std::vector<Interval> out;
    for (size_t k = 0; k + 1 < steps.size() && steps[k + 1].first == steps[k].first + 1; ++k)
        out.push_back({steps[k].second, steps[k + 1].second});
    return out;
}

} // namespace

Result<StepStats> stepsFromCollectives(const detail::CollectiveRuns& runs, const std::vector<CollectiveCall>& extra,
                                       size_t maxRankStepItems, size_t slowestRankSteps) {
    std::map<int64_t, std::vector<const CollectiveCall*>> extraByRank;
    for (const auto& c : extra) extraByRank[c.rank].push_back(&c);
    std::vector<int64_t> ranks = runs.ranks();
    for (const auto& [r, calls] : extraByRank) ranks.push_back(r);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (ranks.empty()) return StepStats{};
    auto lead = leaderCalls(runs, extra, ranks.front()); // the leader: the lowest rank
    if (!lead) return lead.status();
    const size_t period = patternPeriod(*lead);
    if (period == 0) return StepStats{};
    // Step boundaries: instances (communicator, seq) of the leader's calls 0, p, 2p, ...
    std::map<Boundaries::Instance, size_t> byInstance;
    for (size_t k = 0; k * period < lead->size(); ++k)
        byInstance[{(*lead)[k * period].communicatorId, (*lead)[k * period].seq}] = k;
    const Boundaries boundary(byInstance);
    std::vector<CollectiveCall>().swap(*lead); // O(steps) from here on
    StepBuilder b(maxRankStepItems, slowestRankSteps);
    std::vector<detail::RunCall> run;
    static const std::vector<const CollectiveCall*> kNone;
    for (int64_t r : ranks) { // one rank's calls at a time
        HPCPROF_RETURN_IF_ERROR(runs.readRank(r, run));
        auto it = extraByRank.find(r);
        b.addRank(r, rankCollectiveSteps(run, it == extraByRank.end() ? kNone : it->second, boundary));
    }
    return b.finish("collectives:" + std::to_string(period));
}

} // namespace hpcprof::analyzer
