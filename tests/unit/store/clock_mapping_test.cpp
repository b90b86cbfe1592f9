// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "store/clock_mapping.hpp"
#include "raw_builder.hpp"

using namespace hpcprof;
namespace raw = hpcprof::schema::raw;

TEST_CASE("monotonic ticks map one to one", "[store][clock]") {
    auto h = test::makeProcessHeader(1, 1000);
    store::TickConverter c(h, 0);
    CHECK(c.toLocalNs(123456) == 123456);
    CHECK(c.toDurationNs(100, 250) == 150);
    CHECK(c.toDurationNs(250, 100) == -1);
    CHECK_FALSE(c.weakCalibration());
}

TEST_CASE("TSC ticks map through the start and last calibration pairs", "[store][clock]") {
    auto h = test::makeProcessHeader(1, 0);
    h.clockKind = raw::ClockKind::Tsc;
    h.start = {1'000'000, 5'000'000'000, 0};
    h.last = {1'000'000 + 3'000'000'000ull, 6'000'000'000, 0}; // 3 GHz over one second
    store::TickConverter c(h, 0);
    CHECK(c.toLocalNs(1'000'000) == 5'000'000'000);
    CHECK(c.toLocalNs(1'000'000 + 1'500'000'000ull) == 5'500'000'000);
    CHECK(c.toDurationNs(0, 3000) == 1000);
}

TEST_CASE("a torn or too-close last pair falls back to the launcher frequency", "[store][clock]") {
    auto h = test::makeProcessHeader(1, 0);
    h.clockKind = raw::ClockKind::Tsc;
    h.start = {0, 1'000, 0};
    h.last = {3'000'000'000ull, 1'001'000'000, 0};
    h.lastSeq = 3; // odd: the agent was writing it when the process died
    store::TickConverter c(h, 2'000'000'000);
    CHECK(c.toDurationNs(0, 2000) == 1000);
    CHECK_FALSE(c.weakCalibration());
    store::TickConverter none(h, 0);
    CHECK(none.weakCalibration());
}
