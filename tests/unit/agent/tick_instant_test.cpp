// SPDX-License-Identifier: MIT
// The calibration pairs' tick-to-monotonic instants (tsc_frequency.hpp): a bracket widened by an
// interrupt or a hypervisor exit is not taken while a narrow one can be had.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "hpcprof/launch/tsc_frequency.hpp"

using hpcprof::agent::narrowestTickInstant;

namespace {

/// Monotonic reads from a script of (before, after) pairs, one pair per bracket; ticks count the
/// tick reads.
struct ScriptedClocks {
    std::vector<int64_t> ns;
    size_t nextNs = 0;
    uint64_t tickReads = 0;
    auto ticks() {
        return [this] { return 1000 * ++tickReads; };
    }
    auto monotonic() {
        return [this] { return ns.at(nextNs++); };
    }
};

} // namespace

TEST_CASE("a calibration instant skips a bracket widened by an interrupt", "[agent][clock]") {
    ScriptedClocks c{{1'000'000, 1'060'000, 1'070'000, 1'070'040}};
    const auto at = narrowestTickInstant(c.ticks(), c.monotonic());
    CHECK(c.tickReads == 2);       // a second try after the 60 us bracket, none after the 40 ns one
    CHECK(at.ticks == 2000);       // the second tick read
    CHECK(at.monotonicNs == 1'070'020); // its midpoint, not the first's (1,030,000)
    CHECK(at.widthNs == 40);
}

TEST_CASE("a calibration instant keeps the narrowest of its tries when none is narrow", "[agent][clock]") {
    ScriptedClocks c;
    const std::vector<int64_t> widths = {900, 700, 2000, 400, 800, 600, 5000, 450, 900, 900, 900, 900, 900, 900, 900, 900, 300};
    int64_t t = 0;
    for (int64_t w : widths) c.ns.push_back(t += 10'000), c.ns.push_back(t += w);
    const auto at = narrowestTickInstant(c.ticks(), c.monotonic());
    CHECK(c.tickReads == 16); // at most 16 tries: the 17th bracket (300 ns) is never read
    CHECK(at.widthNs == 400);
    CHECK(at.ticks == 4000);
    CHECK(at.monotonicNs == c.ns[6] + 200);
}

TEST_CASE("a calibration instant takes a narrow first bracket at once", "[agent][clock]") {
    ScriptedClocks c{{500, 530}};
    const auto at = narrowestTickInstant(c.ticks(), c.monotonic());
    CHECK(c.tickReads == 1);
    CHECK(at.ticks == 1000);
    CHECK(at.monotonicNs == 515);
}
