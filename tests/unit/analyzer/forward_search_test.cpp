// SPDX-License-Identifier: MIT
// ForwardSearch (analyzer/src/forward_search.hpp) gives std::lower_bound's answer for any key
// sequence: increasing runs, repeats, steps back, keys past both ends, an empty vector.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "analyzer/src/forward_search.hpp"

using hpcprof::analyzer::ForwardSearch;

TEST_CASE("forward search answers as lower_bound for any order of keys", "[analyzer][forward_search]") {
    std::mt19937_64 rng(7);
    for (size_t size : {size_t(0), size_t(1), size_t(2), size_t(5), size_t(1000)}) {
        std::vector<int64_t> sorted(size);
        for (auto& v : sorted) v = int64_t(rng() % 5000);
        std::sort(sorted.begin(), sorted.end()); // with duplicates
        ForwardSearch<int64_t> search(sorted);
        int64_t key = -10;
        for (int i = 0; i < 20000; ++i) {
            const uint64_t r = rng() % 100;
            key += r < 80 ? int64_t(rng() % 20) : r < 95 ? -int64_t(rng() % 300) : int64_t(rng() % 3000);
            const auto expected = size_t(std::lower_bound(sorted.begin(), sorted.end(), key) - sorted.begin());
            INFO("size " << size << ", key " << key);
            REQUIRE(search.lowerBound(key) == expected);
        }
    }
}

TEST_CASE("forward search with a key of another type", "[analyzer][forward_search]") {
    const std::vector<std::pair<int64_t, int64_t>> tags = {{3, 30}, {5, 50}, {9, 90}, {12, 120}};
    auto byId = [](const std::pair<int64_t, int64_t>& t, int64_t id) { return t.first < id; };
    ForwardSearch<std::pair<int64_t, int64_t>, decltype(byId)> search(tags, byId);
    CHECK(search.lowerBound(5) == 1);
    CHECK(search.lowerBound(6) == 2);
    CHECK(search.lowerBound(12) == 3);
    CHECK(search.lowerBound(13) == 4);
    CHECK(search.lowerBound(1) == 0); // back to the start
    CHECK(search.lowerBound(9) == 2);
}
