// SPDX-License-Identifier: MIT
// Per-name totals (analyzer/src/top_list.hpp): the entries `add` remembers point into the
// accumulator's own map, so a copy or a move of it adds into its own entries, never the
// original's.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "analyzer/src/top_list.hpp"

using hpcprof::analyzer::TopAccumulator;

TEST_CASE("per-name totals over names that come back, and copies and moves that keep adding apart",
          "[analyzer][top]") {
    TopAccumulator a;
    for (int i = 0; i < 60; ++i) a.add(i % 6, 10 + i, i % 2 ? 100 : -1); // 6 names: more than it remembers
    REQUIRE(a.items.size() == 6);
    CHECK(a.items.at(0).count == 10);
    CHECK(a.items.at(0).totalNs == 10 * 10 + 6 * (0 + 9) * 10 / 2); // 10 + i for i = 0, 6, ..., 54
    CHECK(a.items.at(1).bytes == 10 * 100);
    CHECK(a.items.at(5).maxNs == 10 + 59);

    TopAccumulator b = a; // remembers nothing of a's entries (a remembers names 2-5, the last added)
    b.add(0, 1, 0);
    b.add(1, 1, 0);
    b.add(5, 1, 0);
    CHECK(a.items.at(0).count == 10);
    CHECK(b.items.at(0).count == 11);
    CHECK(a.items.at(5).count == 10);
    CHECK(b.items.at(5).count == 11);
    a.add(1, 1, 0, 5);
    CHECK(a.items.at(1).count == 15);
    CHECK(b.items.at(1).count == 11);

    std::vector<TopAccumulator> many;
    for (int i = 0; i < 9; ++i) { // the vector grows: its accumulators are moved
        many.push_back(a);
        many.back().add(7, 1, 0);
        many.back().add(4, 1, 0);
    }
    for (auto& m : many) m.add(7, 1, 0);
    for (auto& m : many) m.add(4, 1, 0);
    for (const auto& m : many) CHECK(m.items.at(7).count == 2);
    for (const auto& m : many) CHECK(m.items.at(4).count == 10 + 2);
    CHECK(a.items.count(7) == 0);
    CHECK(a.items.at(4).count == 10);

    TopAccumulator c;
    c.add(3, 1, 0);
    c = b; // assigned: forgets its own entry of name 3, and takes none of b's (0, 1, 5)
    c.add(3, 2, 0);
    c.add(5, 2, 0);
    CHECK(c.items.at(3).count == b.items.at(3).count + 1);
    CHECK(b.items.at(5).count == 11);
    CHECK(c.items.at(5).count == 12);
}
