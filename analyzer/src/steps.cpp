// SPDX-License-Identifier: MIT
#include "steps.hpp"

#include <algorithm>
#include <cmath>
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
struct PerRankStep {
    int64_t begin, end;
};

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

StepStats buildSteps(const std::map<int64_t, std::vector<PerRankStep>>& byRank, std::string source) {
    StepStats s;
    size_t count = 0;
    for (const auto& [r, v] : byRank) count = std::max(count, v.size());
    if (count == 0) return s;
    s.source = std::move(source);
    for (size_t i = 0; i < count; ++i) {
        Step st;
        st.index = int64_t(i);
        st.begin = INT64_MAX;
        st.end = INT64_MIN;
        int64_t minDur = INT64_MAX, maxDur = 0;
        for (const auto& [r, v] : byRank) {
            if (i >= v.size()) continue;
            st.begin = std::min(st.begin, v[i].begin);
            st.end = std::max(st.end, v[i].end);
            int64_t d = v[i].end - v[i].begin;
            minDur = std::min(minDur, d);
            maxDur = std::max(maxDur, d);
        }
        st.durNs = maxDur;
        st.spreadNs = maxDur - minDur;
        s.steps.push_back(st);
    }
    summarizeSteps(s);
    for (const auto& [r, v] : byRank) {
        RankSteps rs;
        rs.rank = r;
        rs.steps.reserve(v.size()); // one per rank and step: no growth slack
        for (const auto& p : v) {
            RankStep one;
            one.begin = p.begin;
            one.end = p.end;
            rs.steps.push_back(one);
        }
        summarizeRank(rs);
        s.ranks.push_back(std::move(rs));
    }
    return s;
}
} // namespace

StepStats stepsFromRanges(const std::map<int64_t, std::vector<Interval>>& rangesByRank,
                          const std::string& name) {
    std::map<int64_t, std::vector<PerRankStep>> byRank;
    for (const auto& [r, v] : rangesByRank) {
        auto sorted = v;
        std::sort(sorted.begin(), sorted.end(),
                  [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
        for (const auto& iv : sorted) byRank[r].push_back({iv.begin, iv.end});
    }
    return buildSteps(byRank, "range:" + name);
}

namespace {
/// Each rank's steps from its (rank, step, start) table sorted by rank and step: consecutive
/// boundaries make a step, up to the first one missing.
std::map<int64_t, std::vector<PerRankStep>> collectiveSteps(const std::vector<std::tuple<int64_t, size_t, int64_t>>& starts) {
    std::map<int64_t, std::vector<PerRankStep>> byRank;
    for (size_t i = 0; i < starts.size();) {
        const int64_t rank = std::get<0>(starts[i]);
        size_t j = i;
        while (j < starts.size() && std::get<0>(starts[j]) == rank) ++j;
        // One entry per step: the last of equal steps (the stable sort kept the calls' order).
        std::vector<std::pair<size_t, int64_t>> steps;
        for (size_t k = i; k < j; ++k) {
            if (!steps.empty() && steps.back().first == std::get<1>(starts[k])) steps.back().second = std::get<2>(starts[k]);
            else steps.emplace_back(std::get<1>(starts[k]), std::get<2>(starts[k]));
        }
        for (size_t k = 0; k + 1 < steps.size() && steps[k + 1].first == steps[k].first + 1; ++k)
            byRank[rank].push_back({steps[k].second, steps[k + 1].second});
        i = j;
    }
    return byRank;
}
} // namespace

StepStats stepsFromCollectives(const CollectiveCalls& calls) {
    if (calls.empty()) return {};
    // Leader: the lowest rank.
    int64_t leader = INT64_MAX;
    for (const auto& c : calls) leader = std::min(leader, c.rank);
    std::vector<const CollectiveCall*> lead;
    for (const auto& c : calls)
        if (c.rank == leader) lead.push_back(&c);
    std::sort(lead.begin(), lead.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
    // Pattern search over a bounded prefix keeps this O(limit * maxPeriod).
    const size_t n = std::min<size_t>(lead.size(), 20000);
    const size_t maxPeriod = std::min<size_t>(512, n / 3);
    size_t period = 0;
    for (size_t p = 1; p <= maxPeriod && period == 0; ++p) {
        bool ok = true;
        for (size_t i = 0; i + p < n && ok; ++i)
            ok = lead[i]->nameId == lead[i + p]->nameId &&
                 lead[i]->communicatorId == lead[i + p]->communicatorId;
        if (ok) period = p;
    }
    if (period == 0) return {};
    // Step boundaries: instances (communicator, seq) of the leader's calls 0, p, 2p, ...
    std::map<std::pair<int64_t, int64_t>, size_t> boundary; // instance -> step index
    for (size_t k = 0; k * period < lead.size(); ++k)
        boundary[{lead[k * period]->communicatorId, lead[k * period]->seq}] = k;
    // (rank, step, start) of every boundary call: a flat table (a map of maps took ~4 times it).
    std::vector<std::tuple<int64_t, size_t, int64_t>> starts;
    for (const auto& c : calls) {
        auto it = boundary.find({c.communicatorId, c.seq});
        if (it != boundary.end()) starts.emplace_back(c.rank, it->second, c.ts);
    }
    // Stable: of two calls of one rank in one boundary instance the later one counts.
    std::stable_sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    return buildSteps(collectiveSteps(starts), "collectives:" + std::to_string(period));
}

} // namespace hpcprof::analyzer
