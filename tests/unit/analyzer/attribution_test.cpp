// SPDX-License-Identifier: MIT
// The attribution's one-pass sweep against its definition in set algebra (docs/analysis.md,
// "Attribution"), written out here with IntervalSet's operations: on hand-made ranks and on
// random ones, CPU and GPU, with and without the totals, every exclusive time, partition set,
// total, overlap and the GPU's idle set are the same.
#include <catch2/catch.hpp>

#include <random>

#include "analyzer/src/attribution.hpp"

using namespace hpcprof::analyzer;

namespace {

constexpr EventClass kBlocking[] = {EventClass::Setup, EventClass::Communication, EventClass::Io,
                                    EventClass::Memory, EventClass::Sync};
constexpr TimeClass kOrder[] = {TimeClass::Setup, TimeClass::Communication, TimeClass::Io, TimeClass::Memory,
                                TimeClass::Sync};

const IntervalSet& all(const TimelineSets& s, EventClass c) { return s.all[int(c)]; }
const IntervalSet& ref(const TimelineSets& s, EventClass c) { return s.reference[int(c)]; }

/// The definition: blocking sets cut to the active window, compute (the reference's GPU work,
/// or the main thread outside every blocking call), then each blocking class in order takes
/// what is left, and the rest of the window is idle.
Attribution byDefinition(const TimelineSets& sets, const IntervalSet& window, const IntervalSet& active, bool totals) {
    Attribution a;
    const IntervalSet act = active.intersect(window);
    a.windowNs = window.length();
    a.activeNs = act.length();
    IntervalSet blocking[5];
    for (int i = 0; i < 5; ++i) blocking[i] = (sets.gpu ? all(sets, kBlocking[i]) : ref(sets, kBlocking[i])).intersect(act);
    IntervalSet computeRef;
    if (sets.gpu) {
        computeRef = ref(sets, EventClass::Compute).intersect(act);
        if (totals) {
            IntervalSet busy = ref(sets, EventClass::Compute);
            for (EventClass c : kBlocking) busy = busy.unite(ref(sets, c));
            a.gpuIdle = act.subtract(busy);
            a.gpuIdleNs = a.gpuIdle.length();
        }
    } else {
        IntervalSet inCalls;
        for (const auto& b : blocking) inCalls = inCalls.unite(b);
        computeRef = act.subtract(inCalls);
    }
    a.partition[int(TimeClass::Compute)] = computeRef;
    IntervalSet taken = computeRef;
    for (int i = 0; i < 5; ++i) {
        IntervalSet part = blocking[i].subtract(taken);
        taken = taken.unite(part);
        a.partition[int(kOrder[i])] = part;
    }
    a.partition[int(TimeClass::Idle)] = window.subtract(taken);
    for (int c = 0; c < kTimeClassCount; ++c) a.exclusive[c] = a.partition[c].length();
    if (totals) {
        const IntervalSet setup = all(sets, EventClass::Setup).intersect(window);
        const IntervalSet comm = all(sets, EventClass::Communication).intersect(window).subtract(setup);
        const IntervalSet io = all(sets, EventClass::Io).intersect(window).subtract(setup);
        a.commTotalNs = comm.length();
        a.commOverlappedNs = comm.intersect(computeRef).length();
        a.ioTotalNs = io.length();
        a.ioOverlappedNs = io.intersect(computeRef).length();
        a.memoryTotalNs = all(sets, EventClass::Memory).intersect(window).length();
        a.syncTotalNs = all(sets, EventClass::Sync).intersect(window).length();
        a.setupTotalNs = setup.length();
    }
    return a;
}

void checkSame(const Attribution& got, const Attribution& want) {
    CHECK(got.windowNs == want.windowNs);
    CHECK(got.activeNs == want.activeNs);
    for (int c = 0; c < kTimeClassCount; ++c) {
        INFO("class " << timeClassName(TimeClass(c)));
        CHECK(got.exclusive[c] == want.exclusive[c]);
        CHECK(got.partition[c].items() == want.partition[c].items());
    }
    CHECK(got.commTotalNs == want.commTotalNs);
    CHECK(got.commOverlappedNs == want.commOverlappedNs);
    CHECK(got.ioTotalNs == want.ioTotalNs);
    CHECK(got.ioOverlappedNs == want.ioOverlappedNs);
    CHECK(got.memoryTotalNs == want.memoryTotalNs);
    CHECK(got.syncTotalNs == want.syncTotalNs);
    CHECK(got.setupTotalNs == want.setupTotalNs);
    CHECK(got.gpuIdleNs == want.gpuIdleNs);
    CHECK(got.gpuIdle.items() == want.gpuIdle.items());
}

IntervalSet randomSet(std::mt19937_64& rng, int n, int64_t span) {
    std::vector<Interval> v;
    std::uniform_int_distribution<int64_t> at(0, span), len(1, span / 8 + 1);
    for (int i = 0; i < n; ++i) {
        const int64_t b = at(rng);
        v.push_back({b, b + len(rng)});
    }
    return IntervalSet::fromUnsorted(std::move(v));
}

} // namespace

TEST_CASE("the attribution of a CPU rank: set-up first, then communication, I/O; compute outside "
          "the calls, idle outside the process",
          "[analyzer][attribution]") {
    TimelineSets s;
    s.reference[int(EventClass::Setup)] = IntervalSet::single(0, 10);
    s.reference[int(EventClass::Communication)] = IntervalSet::fromUnsorted({{5, 20}, {40, 50}});
    s.reference[int(EventClass::Io)] = IntervalSet::single(45, 60);
    s.all[int(EventClass::Setup)] = IntervalSet::single(0, 10);
    s.all[int(EventClass::Communication)] = IntervalSet::fromUnsorted({{5, 20}, {30, 50}}); // a helper thread too
    s.all[int(EventClass::Io)] = IntervalSet::single(45, 60);
    const Attribution a = attribute(s, IntervalSet::single(0, 100), IntervalSet::single(0, 90));
    CHECK(a.exclusive[int(TimeClass::Setup)] == 10);
    CHECK(a.exclusive[int(TimeClass::Communication)] == 10 + 10);  // [10, 20) and [40, 50)
    CHECK(a.exclusive[int(TimeClass::Io)] == 10);                  // [50, 60)
    CHECK(a.exclusive[int(TimeClass::Compute)] == 20 + 30);        // [20, 40) and [60, 90)
    CHECK(a.exclusive[int(TimeClass::Idle)] == 10);                // [90, 100)
    CHECK(a.partition[int(TimeClass::Compute)].items() == std::vector<Interval>{{20, 40}, {60, 90}});
    CHECK(a.commTotalNs == 10 + 20);   // [10, 20) and [30, 50): set-up's part is set-up's
    CHECK(a.commOverlappedNs == 10);   // the helper thread's [30, 40) under the main thread's compute
    CHECK(a.ioTotalNs == 15);
    CHECK(a.setupTotalNs == 10);
    checkSame(a, byDefinition(s, IntervalSet::single(0, 100), IntervalSet::single(0, 90), true));
}

TEST_CASE("the attribution's sweep equals its definition in set algebra on random ranks",
          "[analyzer][attribution]") {
    std::mt19937_64 rng(20261203);
    for (int round = 0; round < 400; ++round) {
        INFO("round " << round);
        const int64_t span = 1000 + int64_t(rng() % 100000);
        const int n = 1 + int(rng() % 60);
        TimelineSets s;
        s.gpu = round % 3 == 0;
        for (int c = 0; c < kEventClassCount; ++c) {
            if (rng() % 4 == 0) continue; // some classes empty, as on most ranks
            s.all[c] = randomSet(rng, n, span);
            s.reference[c] = rng() % 2 ? s.all[c] : s.all[c].intersect(randomSet(rng, n, span));
        }
        const IntervalSet window = rng() % 5 == 0 ? IntervalSet() : randomSet(rng, 1 + int(rng() % 4), span);
        const IntervalSet active = rng() % 4 == 0 ? IntervalSet::single(0, span * 2) : randomSet(rng, 1 + int(rng() % 3), span);
        for (bool totals : {true, false}) {
            INFO("gpu " << s.gpu << ", totals " << totals);
            checkSame(attribute(s, window, active, totals), byDefinition(s, window, active, totals));
        }
    }
}
