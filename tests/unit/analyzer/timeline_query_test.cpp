// SPDX-License-Identifier: MIT
// Level-of-detail timeline queries: wide slices come back as they are, narrow ones are folded per
// (depth, bucket), and the window is found by binary search rather than a scan.
#include <catch2/catch.hpp>

#include "hpcprof/analyzer/timeline_query.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

TEST_CASE("timeline query folds slices narrower than the resolution", "[analyzer][lod]") {
    test::TraceBuilder b;
    int t = b.rank(0, 0, 100'000, 1);
    // A long outer slice [0, 50000), 1000 tiny children every 40 ns from 1000, a medium slice.
    b.event(t, Category::UserRange, "outer", 0, 50'000);
    for (int i = 0; i < 1000; ++i) b.event(t, Category::PosixIo, "write", 1000 + 40 * i, 10 + (i % 7)).withDepth(1);
    b.event(t, Category::PosixIo, "read", 60'000, 5'000);
    test::TempDir dir;
    b.write(dir / "t.hpcprof");
    auto trace = Trace::open(dir / "t.hpcprof");
    REQUIRE(trace.ok());
    TimelineQuery q(*trace);

    auto r = q.slices(1, 0, 100'000, 1'000);
    REQUIRE(r.ok());
    REQUIRE(r->slices.size() == 2);
    CHECK(r->slices[0].dur == 50'000);
    CHECK(r->slices[1].dur == 5'000);
    // Children span [1000, 41000): buckets 1..40 of 1000 ns at depth 1, 25 children each.
    REQUIRE(r->aggregates.size() == 40);
    int64_t total = 0;
    for (const auto& a : r->aggregates) {
        CHECK(a.depth == 1);
        CHECK(a.count == 25);
        CHECK(a.maxDur == 16);
        total += a.count;
    }
    CHECK(total == 1000);
    // Binary search: about 2 * log2(1002) point lookups, never one per event.
    CHECK(r->pointLookups <= 2 * 11);

    // A window in the middle still returns the outer slice that started before it.
    auto mid = q.slices(1, 20'000, 21'000, 100);
    REQUIRE(mid.ok());
    REQUIRE(mid->slices.size() == 1);
    CHECK(mid->slices[0].ts == 0);
    int64_t n = 0;
    for (const auto& a : mid->aggregates) n += a.count;
    CHECK(n == 25); // children starting in [19000+...]: ts 20000..20960 overlapping the window

    // Resolution 0: every overlapping event is a slice.
    auto all = q.slices(1, 59'000, 70'000, 0);
    REQUIRE(all.ok());
    CHECK(all->slices.size() == 1);
    CHECK(all->aggregates.empty());
    CHECK_FALSE(q.slices(99, 0, 10, 1).ok());
}
