// SPDX-License-Identifier: MIT
// Interval algebra: exact results on small cases and agreement with a brute-force bitmap on
// random sets.
#include <catch2/catch.hpp>

#include <random>

#include "analyzer/src/intervals.hpp"

using hpcprof::analyzer::Interval;
using hpcprof::analyzer::IntervalSet;

namespace {
std::vector<Interval> items(const IntervalSet& s) { return s.items(); }
} // namespace

TEST_CASE("normalization sorts, merges overlapping and touching intervals and drops empty ones",
          "[analyzer][intervals]") {
    auto s = IntervalSet::fromUnsorted({{50, 60}, {0, 10}, {5, 20}, {20, 25}, {30, 30}, {40, 35}});
    REQUIRE(items(s) == std::vector<Interval>{{0, 25}, {50, 60}});
    REQUIRE(s.length() == 35);
}

TEST_CASE("union, intersection and difference give the hand-computed intervals", "[analyzer][intervals]") {
    auto a = IntervalSet::fromUnsorted({{0, 10}, {20, 30}, {40, 50}});
    auto b = IntervalSet::fromUnsorted({{5, 25}, {45, 60}});
    REQUIRE(items(a.unite(b)) == std::vector<Interval>{{0, 30}, {40, 60}});
    REQUIRE(items(a.intersect(b)) == std::vector<Interval>{{5, 10}, {20, 25}, {45, 50}});
    REQUIRE(items(a.subtract(b)) == std::vector<Interval>{{0, 5}, {25, 30}, {40, 45}});
    REQUIRE(items(b.subtract(a)) == std::vector<Interval>{{10, 20}, {50, 60}});
    REQUIRE(items(a.complementIn(-5, 55)) == std::vector<Interval>{{-5, 0}, {10, 20}, {30, 40}, {50, 55}});
    REQUIRE(a.lengthIn(8, 42) == 2 + 10 + 2);
    REQUIRE(a.lengthIn(10, 20) == 0);
}

TEST_CASE("one subtracted interval spanning several others removes all of them", "[analyzer][intervals]") {
    auto a = IntervalSet::fromUnsorted({{0, 10}, {20, 30}, {40, 50}});
    REQUIRE(a.subtract(IntervalSet::single(5, 45)).length() == 5 + 5);
    REQUIRE(items(a.subtract(IntervalSet::single(5, 45))) == std::vector<Interval>{{0, 5}, {45, 50}});
}

TEST_CASE("set operations agree with a brute-force bitmap on random sets", "[analyzer][intervals]") {
    std::mt19937 rng(42);
    constexpr int kSpan = 400;
    for (int round = 0; round < 200; ++round) {
        auto randomSet = [&](std::vector<bool>& bits) {
            std::vector<Interval> v;
            int n = int(rng() % 12);
            for (int i = 0; i < n; ++i) {
                int b = int(rng() % kSpan), len = int(rng() % 60);
                int e = std::min(kSpan, b + len);
                v.push_back({b, e});
                for (int t = b; t < e; ++t) bits[size_t(t)] = true;
            }
            return IntervalSet::fromUnsorted(v);
        };
        std::vector<bool> ba(kSpan), bb(kSpan);
        auto a = randomSet(ba);
        auto b = randomSet(bb);
        int64_t u = 0, i = 0, d = 0;
        for (int t = 0; t < kSpan; ++t) {
            u += ba[size_t(t)] || bb[size_t(t)];
            i += ba[size_t(t)] && bb[size_t(t)];
            d += ba[size_t(t)] && !bb[size_t(t)];
        }
        REQUIRE(a.unite(b).length() == u);
        REQUIRE(a.intersect(b).length() == i);
        REQUIRE(a.subtract(b).length() == d);
        REQUIRE(a.unite(b).length() == a.length() + b.length() - i);
    }
}
