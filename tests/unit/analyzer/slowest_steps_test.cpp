// SPDX-License-Identifier: MIT
// limitRankSteps (analyzer/src/steps.hpp): beyond the limit each rank keeps its slowest steps,
// of equal durations the earlier ones, listed by index, with the statistics of all its steps.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "analyzer/src/steps.hpp"

using namespace hpcprof::analyzer;

TEST_CASE("the slowest steps are kept, of equal durations the earlier", "[analyzer][steps]") {
    // Durations by step: 5 9 9 3 9 1 9 (rank 0), and a rank with fewer steps than kept.
    const std::vector<int64_t> durs = {5, 9, 9, 3, 9, 1, 9};
    std::map<int64_t, std::vector<Interval>> ranges;
    int64_t t = 0;
    for (int64_t d : durs) {
        ranges[0].push_back({t, t + d});
        t += 100;
    }
    ranges[1] = {{0, 4}, {100, 102}};
    StepStats s = stepsFromRanges(ranges, "step");
    REQUIRE(s.ranks.size() == 2);
    const int64_t meanBefore = s.ranks[0].meanNs;
    limitRankSteps(s, 3, 3);
    REQUIRE(s.ranks[0].steps.size() == 3);
    std::vector<int64_t> kept;
    for (const RankStep& st : s.ranks[0].steps) kept.push_back(st.index);
    CHECK(kept == std::vector<int64_t>{1, 2, 4}); // three of the four 9s: the earliest, by index
    CHECK(s.ranks[0].count == 7);
    CHECK(s.ranks[0].meanNs == meanBefore);
    CHECK(s.ranks[1].steps.size() == 2);
    CHECK(s.slowestPerRank == 3);
}
