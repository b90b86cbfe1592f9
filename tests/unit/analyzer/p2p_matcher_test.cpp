// SPDX-License-Identifier: MIT
// The point-to-point wait states computed while the rank passes run (p2p_matcher.hpp): messages
// are dropped as soon as both partners' ranks are done, and the result does not depend on the
// order the ranks finish in (ties included). Waits computed by hand in the comments.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>

#include "analyzer/src/p2p_matcher.hpp"
#include "analyzer/src/wait_states.hpp"

using namespace hpcprof::analyzer;

namespace {

P2pCall blocking(int64_t rank, int64_t peer, bool send, int64_t ts, int64_t end, int64_t id) {
    P2pCall m;
    m.rank = rank;
    m.peer = peer;
    m.send = send;
    m.blocking = true;
    m.tag = 1;
    m.communicatorId = 7;
    m.ts = ts;
    m.end = end;
    m.eventId = id;
    return m;
}

constexpr int64_t kRanks = 8, kMessages = 100;

/// A ring: rank r receives message i from r-1 entering at 1000 i and leaving at 1000 i + 500;
/// rank r-1 sends it at 1000 i + 5 r' (r' = r-1 + 1): the receiver waits 5 r', blamed on the
/// sender, in every one of the 100 messages (equal waits: the example is the first message).
std::vector<P2pCall> ringRank(int64_t r) {
    std::vector<P2pCall> out;
    const int64_t next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
    for (int64_t i = 0; i < kMessages; ++i) {
        const int64_t t = 1000 * i;
        out.push_back(blocking(r, next, true, t + 5 * (r + 1), t + 5 * (r + 1) + 1, 100000 * (r + 1) + 2 * i));
        out.push_back(blocking(r, prev, false, t, t + 500, 100000 * (r + 1) + 2 * i + 1));
    }
    return out;
}

WaitStates waitsOf(const P2pMatcher& m) {
    std::vector<int64_t> ranks(kRanks);
    std::iota(ranks.begin(), ranks.end(), 0);
    return computeWaitStates(CollectiveCalls{}, m, ranks, [](int64_t) { return std::nullopt; });
}

} // namespace

TEST_CASE("a ring's messages are matched as the ranks finish: only the open partners' stay", "[analyzer][wait_states]") {
    P2pMatcher m;
    for (int64_t r = 0; r < kRanks; ++r) {
        m.addRank(r, ringRank(r));
        // Held: rank 0's receives from rank 7 (not done) and rank r's sends to r + 1; the rest
        // of the ring is matched and gone.
        CHECK(m.pendingMessages() == size_t(r + 1 < kRanks ? 2 * kMessages : 0));
    }
    m.finish();
    const WaitStates w = waitsOf(m);
    CHECK(w.matchedMessages == kRanks * kMessages);
    CHECK(w.unmatchedMessages == 0);
    CHECK(w.lateSenderNs == kMessages * 5 * (kRanks * (kRanks + 1) / 2)); // 100 x 5 x (1 + ... + 8)
    CHECK(w.lateReceiverNs == 0);
    REQUIRE(w.stragglers.size() == size_t(kRanks));
    CHECK(w.stragglers[0].rank == kRanks - 1); // waits 5 x 8 in each of its messages
    CHECK(w.stragglers[0].inflictedWaitNs == kMessages * 5 * kRanks);
    CHECK(w.stragglers[0].maxInflictedNs == 5 * kRanks);
    CHECK(w.stragglers[0].exampleEventId == 100000 * kRanks); // its first send: the first of equal waits
}

TEST_CASE("the point-to-point waits do not depend on the order the ranks finish in", "[analyzer][wait_states]") {
    // Rank 0 posts receives from ranks 1 and 2 (tag 1) at 10 and 11 and completes both in one
    // Waitall [20, 100); ranks 1 and 2 send at 50: each request would wait min(50, 100) - 20 = 30.
    // The call waits 30 once, blamed on rank 1 (of equal waits, the lower sender's message).
    auto rank0 = [] {
        std::vector<P2pCall> v{blocking(0, 1, false, 10, 10, 1), blocking(0, 2, false, 11, 11, 2)};
        for (P2pCall& m : v) {
            m.blocking = false;
            m.waitEventId = 900;
            m.waitTs = 20;
            m.waitEnd = 100;
        }
        return v;
    };
    std::vector<std::vector<int64_t>> orders{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}};
    for (const auto& order : orders) {
        P2pMatcher m;
        for (int64_t r : order)
            m.addRank(r, r == 0 ? rank0() : std::vector<P2pCall>{blocking(r, 0, true, 50, 60, 10 + r)});
        m.finish();
        const WaitStates w = waitsOf(m);
        INFO("ranks finished in the order " << order[0] << order[1] << order[2]);
        CHECK(w.lateSenderNs == 30);
        REQUIRE(w.stragglers.size() == 1);
        CHECK(w.stragglers[0].rank == 1);
        CHECK(w.stragglers[0].exampleEventId == 11);
        CHECK(m.pendingMessages() == 0);
    }
}

TEST_CASE("messages are put in matching order as a stable sort by key and time would", "[analyzer][p2p]") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 300; ++round) {
        const size_t n = rng() % 400;
        const int tags = 1 + int(rng() % (round % 3 == 0 ? 100 : 5)); // past 64 keys: the sort
        const bool timeOrder = round % 4 != 1, byCommunicator = round % 2 == 0;
        std::vector<P2pCall> calls(n);
        int64_t ts = 0;
        for (size_t i = 0; i < n; ++i) {
            ts += int64_t(rng() % 3); // equal times: the first stays first
            calls[i].ts = timeOrder ? ts : int64_t(rng() % 50);
            calls[i].tag = int64_t(rng() % uint64_t(tags));
            calls[i].communicatorId = int64_t(rng() % 3) - 1;
            calls[i].eventId = int64_t(i);
        }
        auto expected = calls;
        std::stable_sort(expected.begin(), expected.end(), [&](const P2pCall& a, const P2pCall& b) {
            const int64_t ca = byCommunicator ? a.communicatorId : -1, cb = byCommunicator ? b.communicatorId : -1;
            return std::tuple(ca, a.tag, a.ts) < std::tuple(cb, b.tag, b.ts);
        });
        detail::sortForMatching(calls, byCommunicator);
        std::vector<int64_t> got, want;
        for (size_t i = 0; i < n; ++i) got.push_back(calls[i].eventId), want.push_back(expected[i].eventId);
        INFO("round " << round << ", " << n << " calls, " << tags << " tags");
        REQUIRE(got == want);
    }
}
