// SPDX-License-Identifier: MIT
// The collective calls written out as per-rank runs (analyzer/src/collective_runs.hpp) and read
// back side by side: the sweep gives every call in the order of one sort of all of them, the
// wait states settled one instance at a time equal those of the whole list, and a temporary file
// and memory give the same.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <map>
#include <random>
#include <tuple>

#include <sys/resource.h>

#include "analyzer/src/collective_runs.hpp"
#include "analyzer/src/p2p_matcher.hpp"
#include "analyzer/src/wait_states.hpp"

using namespace hpcprof::analyzer;
using hpcprof::analyzer::detail::CollectiveRuns;

namespace {

/// 4 ranks, 3 instances on communicator 7 and 2 on communicator 5, each rank's calls in a scan
/// order that is not the instance order (two threads); rank 2 misses instance (7, 2); rank 1
/// calls (5, 0) twice. Entry times make rank (seq % 4) the last.
std::map<int64_t, std::vector<CollectiveCall>> job() {
    std::map<int64_t, std::vector<CollectiveCall>> byRank;
    int64_t id = 1;
    for (int64_t r = 0; r < 4; ++r) {
        auto& calls = byRank[r];
        for (int64_t seq : {2, 0, 1}) {
            if (r == 2 && seq == 2) continue;
            const int64_t ts = 1000 * seq + (r == seq % 4 ? 300 : 10 * r);
            calls.push_back({r, 7, seq, ts, ts + 400, r == 0 ? 2 << 20 : 64, 9, id++});
        }
        for (int64_t seq : {1, 0}) {
            const int64_t ts = 5000 + 1000 * seq + 20 * r;
            calls.push_back({r, 5, seq, ts, ts + 100, 16, 8, id++});
            if (r == 1 && seq == 0) calls.push_back({r, 5, seq, ts + 50, ts + 150, 16, 8, id++});
        }
    }
    return byRank;
}

/// The order the sweep must give: every call listed rank by rank, then `extra`, sorted by
/// (communicator, seq, rank), stable.
std::vector<int64_t> expectedIds(const std::map<int64_t, std::vector<CollectiveCall>>& byRank,
                                 const std::vector<CollectiveCall>& extra) {
    std::vector<CollectiveCall> all;
    for (const auto& [r, calls] : byRank) all.insert(all.end(), calls.begin(), calls.end());
    all.insert(all.end(), extra.begin(), extra.end());
    std::stable_sort(all.begin(), all.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
        return std::tie(a.communicatorId, a.seq, a.rank) < std::tie(b.communicatorId, b.seq, b.rank);
    });
    std::vector<int64_t> ids;
    for (const auto& c : all) ids.push_back(c.eventId);
    return ids;
}

CollectiveRuns runsOf(const std::map<int64_t, std::vector<CollectiveCall>>& byRank, bool inMemory) {
    CollectiveRuns runs(inMemory);
    for (int64_t r : {3, 1, 0, 2}) { // passes end in any order
        const auto& calls = byRank.at(r);
        std::vector<bool> small(calls.size());
        for (size_t i = 0; i < calls.size(); ++i) small[i] = calls[i].bytes < 1024;
        REQUIRE(runs.addRank(r, calls, small).ok());
    }
    return runs;
}

} // namespace

TEST_CASE("collective runs are swept in instance order, from a file or from memory", "[analyzer][waits]") {
    const auto byRank = job();
    // Two calls matched across ranks outside the runs (communication kernels): rank 1 and 3.
    const std::vector<CollectiveCall> extra = {{3, -2, 0, 100, 200, -1, 4, 901}, {1, -2, 0, 110, 190, -1, 4, 900}};
    std::map<int64_t, int64_t> rankOf; // event id -> rank
    for (const auto& [r, calls] : byRank)
        for (const auto& c : calls) rankOf[c.eventId] = r;
    for (const auto& c : extra) rankOf[c.eventId] = c.rank;
    for (bool inMemory : {false, true}) {
        const CollectiveRuns runs = runsOf(byRank, inMemory);
        CHECK(runs.spilled() == !inMemory);
        CHECK(runs.size() == 20);
        CHECK(runs.ranks() == std::vector<int64_t>{0, 1, 2, 3});
        std::vector<int64_t> ids;
        std::vector<bool> small;
        REQUIRE(runs.sweep(extra, [&](const CollectiveCall& c, bool s) {
                        ids.push_back(c.eventId);
                        small.push_back(s);
                        CHECK(c.rank == rankOf.at(c.eventId));
                    }).ok());
        CHECK(ids == expectedIds(byRank, extra));
        CHECK(small.size() == 22);
        CHECK(std::count(small.begin(), small.end(), true) == 20 - 3); // rank 0's 3 calls on 7 are large
        // One rank's run: by (communicator, seq), in scan order among equals, with its place.
        std::vector<detail::RunCall> run;
        REQUIRE(runs.readRank(1, run).ok());
        REQUIRE(run.size() == 6);
        std::vector<std::tuple<int64_t, int64_t, uint32_t>> got;
        for (const auto& c : run) got.emplace_back(c.call.communicatorId, c.call.seq, c.position);
        CHECK(got == std::vector<std::tuple<int64_t, int64_t, uint32_t>>{
                         {5, 0, 4}, {5, 0, 5}, {5, 1, 3}, {7, 0, 1}, {7, 1, 2}, {7, 2, 0}});
        REQUIRE(runs.readRank(9, run).ok());
        CHECK(run.empty());
    }
}

TEST_CASE("collective runs of 1 to 70 ranks, some empty, are swept in the order of one sort of all "
          "their calls", "[analyzer][waits]") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 60; ++round) {
        INFO("round " << round);
        const int ranks = 1 + int(rng() % 70);
        std::map<int64_t, std::vector<CollectiveCall>> byRank;
        int64_t id = 1;
        for (int64_t r = 0; r < ranks; ++r) {
            if (rng() % 6 == 0) continue; // a rank without collectives: no run
            auto& calls = byRank[r * 3]; // ranks need not be consecutive
            const int n = int(rng() % 40);
            for (int i = 0; i < n; ++i) // a few communicators, repeated instances
                calls.push_back({r * 3, int64_t(rng() % 3), int64_t(rng() % 12), i, i + 1, 8, 1, id++});
        }
        std::vector<CollectiveCall> extra;
        for (int i = 0, n = int(rng() % 10); i < n && !byRank.empty(); ++i)
            extra.push_back({std::next(byRank.begin(), ptrdiff_t(rng() % byRank.size()))->first, int64_t(rng() % 3),
                             int64_t(rng() % 12), 0, 1, 8, 1, id++});
        CollectiveRuns runs(true);
        for (const auto& [r, calls] : byRank) REQUIRE(runs.addRank(r, calls, {}).ok());
        std::vector<int64_t> ids;
        REQUIRE(runs.sweep(extra, [&](const CollectiveCall& c, bool) { ids.push_back(c.eventId); }).ok());
        CHECK(ids == expectedIds(byRank, extra));
    }
}

TEST_CASE("collective wait states settled one instance at a time equal the whole list's", "[analyzer][waits]") {
    const auto byRank = job();
    std::vector<CollectiveCall> all;
    for (const auto& [r, calls] : byRank) all.insert(all.end(), calls.begin(), calls.end());
    const std::vector<int64_t> ranks = {0, 1, 2, 3};
    auto size = [](int64_t) -> std::optional<int64_t> { return 4; };
    const WaitStates whole = computeWaitStates(all, {}, ranks, size);

    const CollectiveRuns runs = runsOf(byRank, false);
    P2pMatcher none;
    none.finish();
    std::map<int64_t, int64_t> smallWait, perCall;
    CollectiveSweep sweep(ranks, size, [&](const CollectiveCall& c, bool small, int64_t wait) {
        if (small) smallWait[c.rank] += wait;
        perCall[c.eventId] += wait;
    });
    REQUIRE(runs.sweep({}, [&](const CollectiveCall& c, bool small) { sweep.add(c, small); }).ok());
    const WaitStates w = sweep.finish(none);
    CHECK(sweep.largestInstance() == 5); // rank 1's two calls of (5, 0) make it 5, and incomplete

    // (7, 2) lacks rank 2 and (5, 0) has 5 calls: incomplete; (7, 0), (7, 1), (5, 1) complete.
    CHECK(w.completeInstances == 3);
    CHECK(w.incompleteInstances == 2);
    CHECK(w.completeInstances == whole.completeInstances);
    CHECK(w.collectiveWaitNs == whole.collectiveWaitNs);
    REQUIRE(w.perRank.size() == whole.perRank.size());
    for (size_t i = 0; i < w.perRank.size(); ++i) CHECK(w.perRank[i].collectiveWaitNs == whole.perRank[i].collectiveWaitNs);
    REQUIRE(w.stragglers.size() == whole.stragglers.size());
    for (size_t i = 0; i < w.stragglers.size(); ++i) {
        CHECK(w.stragglers[i].rank == whole.stragglers[i].rank);
        CHECK(w.stragglers[i].inflictedWaitNs == whole.stragglers[i].inflictedWaitNs);
        CHECK(w.stragglers[i].exampleEventId == whole.stragglers[i].exampleEventId);
    }
    // (7, 0): rank 0 enters last at 300, the others at 10, 20, 30: waits 290 + 280 + 270.
    // (7, 1): rank 1 last at 1300; 1000, 1020, 1030 wait 300, 280, 270.
    // (5, 1): entries 6000, 6020, 6040, 6060 (rank 3 last): 60 + 40 + 20, capped by the calls' 100.
    CHECK(w.collectiveWaitNs == 840 + 850 + 120);
    for (const auto& [id, ns] : perCall)
        if (ns > 0) CHECK(whole.waitByEvent.at(id) == ns);
    CHECK(smallWait[0] == 60);                // rank 0's small call: (5, 1) only
    CHECK(smallWait[2] == 280 + 280 + 20);    // (7, 0), (7, 1), (5, 1)
}

namespace {

/// 4 ranks of 6,000 calls on one communicator, each about 48 KB of runs (8 bytes a call).
std::map<int64_t, std::vector<CollectiveCall>> longJob() {
    std::map<int64_t, std::vector<CollectiveCall>> byRank;
    int64_t id = 1;
    for (int64_t r = 0; r < 4; ++r)
        for (int64_t seq = 0; seq < 6000; ++seq) byRank[r].push_back({r, 1, seq, 10 * seq + r, 10 * seq + 5, 8, 1, id++});
    return byRank;
}

/// The bytes of the runs after each rank of `byRank` is added, in rank order.
std::vector<size_t> bytesAfterEachRank(const std::map<int64_t, std::vector<CollectiveCall>>& byRank) {
    CollectiveRuns runs(true);
    std::vector<size_t> out;
    for (const auto& [r, calls] : byRank) {
        REQUIRE(runs.addRank(r, calls, {}).ok());
        out.push_back(runs.bytes());
    }
    return out;
}

/// Adds the ranks while files may not grow past 64 KiB (as on a full disk: the write fails with
/// EFBIG, SIGXFSZ ignored meanwhile): the temporary file fails during rank 1. The status of each
/// rank's addRank, in rank order.
std::vector<hpcprof::Status> addWhileFilesCannotGrow(CollectiveRuns& runs,
                                                     const std::map<int64_t, std::vector<CollectiveCall>>& byRank) {
    rlimit before{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &before) == 0);
    const rlimit small{64 << 10, before.rlim_max};
    auto* handler = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    std::vector<hpcprof::Status> out;
    for (const auto& [r, calls] : byRank) out.push_back(runs.addRank(r, calls, {}));
    setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, handler);
    return out;
}

} // namespace

TEST_CASE("runs whose temporary file stops growing move to memory up to the limit, then say where room is missing",
          "[analyzer][waits][safety]") {
    const auto byRank = longJob();
    const std::vector<size_t> after = bytesAfterEachRank(byRank);
    REQUIRE(after[0] < (64u << 10)); // rank 0 fits the file, rank 1 does not
    REQUIRE(after[1] > (64u << 10));
    SECTION("under the limit: the same sweep as in memory") {
        CollectiveRuns runs(false, 1 << 20);
        for (const auto& st : addWhileFilesCannotGrow(runs, byRank)) REQUIRE(st.ok());
        CHECK_FALSE(runs.spilled());
        CHECK(runs.size() == 24000);
        CHECK(runs.bytes() == after[3]);
        std::vector<int64_t> ids;
        REQUIRE(runs.sweep({}, [&](const CollectiveCall& c, bool) { ids.push_back(c.eventId); }).ok());
        CHECK(ids == expectedIds(byRank, {}));
    }
    SECTION("past the limit: an error that names TMPDIR, not a process that grows until it is killed") {
        CollectiveRuns runs(false, after[1]); // rank 0 in the file, ranks 0 and 1 fit memory, rank 2 not
        const auto st = addWhileFilesCannotGrow(runs, byRank);
        CHECK(st[0].ok());
        CHECK(st[1].ok());
        REQUIRE_FALSE(st[2].ok());
        CHECK_THAT(st[2].message(), Catch::Contains("could not grow past 0.0 MiB") && Catch::Contains("TMPDIR") &&
                                        Catch::Contains("0.1 MiB so far"));
    }
}

namespace {

/// Two ranks of 300,000 calls of random values, the extremes of int64 among them (differences
/// wrap), each rank's run longer than a cursor's share of the sweep's buffer (its refills cut
/// calls anywhere), and each call's small mark.
std::map<int64_t, std::vector<CollectiveCall>> randomCalls(std::map<int64_t, std::vector<bool>>& smallByRank) {
    std::mt19937_64 rng(11);
    const int64_t extremes[] = {INT64_MIN, INT64_MAX, -1, 0, 1};
    auto value = [&]() {
        switch (rng() % 4) {
        case 0: return extremes[rng() % 5];
        case 1: return int64_t(rng());
        default: return int64_t(rng() % 100'000);
        }
    };
    std::map<int64_t, std::vector<CollectiveCall>> byRank;
    int64_t id = 1;
    for (int64_t r : {0, 1}) {
        auto& calls = byRank[r];
        for (int i = 0; i < 300'000; ++i) {
            const int64_t ts = value();
            calls.push_back({r, int64_t(rng() % 4), int64_t(i / 2), ts, rng() % 3 ? ts + int64_t(rng() % 5000) : value(),
                             value(), value(), id++});
            if (rng() % 7 == 0) calls.back().eventId = value();
            smallByRank[r].push_back(rng() % 2);
        }
    }
    return byRank;
}

} // namespace

TEST_CASE("every field of a call comes back exact from a run, whatever its value", "[analyzer][waits]") {
    std::map<int64_t, std::vector<bool>> smallByRank;
    const auto byRank = randomCalls(smallByRank);
    for (bool inMemory : {false, true}) {
        INFO((inMemory ? "in memory" : "in a file"));
        CollectiveRuns runs(inMemory);
        for (const auto& [r, calls] : byRank) REQUIRE(runs.addRank(r, calls, smallByRank[r]).ok());
        CHECK(runs.spilled() == !inMemory);
        CHECK(runs.bytes() > (size_t(8) << 20)); // each run past its 4 MiB share of the buffer
        for (const auto& [r, calls] : byRank) {
            std::vector<detail::RunCall> run;
            REQUIRE(runs.readRank(r, run).ok());
            REQUIRE(run.size() == calls.size());
            std::vector<bool> seen(calls.size());
            size_t differ = 0;
            for (const auto& c : run) {
                REQUIRE(c.position < calls.size());
                const CollectiveCall& want = calls[c.position];
                differ += std::tie(c.call.rank, c.call.communicatorId, c.call.seq, c.call.ts, c.call.end, c.call.bytes,
                                   c.call.nameId, c.call.eventId) != std::tie(want.rank, want.communicatorId, want.seq,
                                                                              want.ts, want.end, want.bytes,
                                                                              want.nameId, want.eventId) ||
                          c.small != smallByRank[r][c.position];
                seen[c.position] = true;
            }
            CHECK(differ == 0);
            CHECK(std::count(seen.begin(), seen.end(), true) == ptrdiff_t(calls.size()));
        }
        std::vector<CollectiveCall> swept;
        REQUIRE(runs.sweep({}, [&](const CollectiveCall& c, bool) { swept.push_back(c); }).ok());
        REQUIRE(swept.size() == 600'000);
        std::vector<CollectiveCall> want;
        for (const auto& [r, calls] : byRank) want.insert(want.end(), calls.begin(), calls.end());
        std::stable_sort(want.begin(), want.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
            return std::tie(a.communicatorId, a.seq, a.rank) < std::tie(b.communicatorId, b.seq, b.rank);
        });
        size_t differ = 0;
        for (size_t i = 0; i < want.size(); ++i)
            differ += std::tie(swept[i].eventId, swept[i].ts, swept[i].end, swept[i].bytes, swept[i].nameId) !=
                      std::tie(want[i].eventId, want[i].ts, want[i].end, want[i].bytes, want[i].nameId);
        CHECK(differ == 0);
    }
}
