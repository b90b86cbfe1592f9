// SPDX-License-Identifier: MIT
// Internal to the wait-state analysis (wait_states.cpp, p2p_matcher.cpp): the tables its waits
// are summed into. The collectives and the point-to-point messages fill tables of their own
// (the messages while the rank passes run, in whatever order the ranks finish), which are then
// merged; every sum is independent of that order, and the one choice that is not, the example
// event of a rank's largest inflicted wait, goes by BlameOrder: of equal waits the first in the
// order a single sweep would meet them (collective instances, then messages by (communicator,
// sender, receiver, tag, pair), then completing calls by event id).
#pragma once

#include <compare>
#include <cstdint>
#include <map>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer::detail {

struct BlameOrder {
    int64_t phase = 0, a = 0, b = 0, c = 0, d = 0, e = 0;
    auto operator<=>(const BlameOrder&) const = default;
};

/// What the analysis accumulates: the totals, every rank's waits and the wait it inflicted.
struct WaitTables {
    WaitTables() = default;
    explicit WaitTables(const std::vector<int64_t>& ranks) {
        for (int64_t r : ranks) {
            perRank[r].rank = r;
            strag[r].rank = r;
        }
    }

    RankWait& rankWait(int64_t rank) {
        RankWait& r = perRank[rank];
        r.rank = rank;
        return r;
    }
    Straggler& straggler(int64_t rank) {
        Straggler& s = strag[rank];
        s.rank = rank;
        return s;
    }
    /// `rank` made others wait `ns` (in one instance or message; `eventId` is its call).
    void blame(int64_t rank, int64_t ns, int64_t eventId, const BlameOrder& order, bool inCollective = false) {
        Straggler& s = straggler(rank);
        s.inflictedWaitNs += ns;
        if (inCollective) s.inflictedInCollectivesNs += ns;
        worst(rank, s, ns, eventId, order);
    }

    /// Adds `other`'s sums; its example events compete with ours by BlameOrder.
    void merge(const WaitTables& other) {
        w.completeInstances += other.w.completeInstances;
        w.incompleteInstances += other.w.incompleteInstances;
        w.matchedMessages += other.w.matchedMessages;
        w.unmatchedMessages += other.w.unmatchedMessages;
        w.collectiveWaitNs += other.w.collectiveWaitNs;
        w.lateSenderNs += other.w.lateSenderNs;
        w.lateReceiverNs += other.w.lateReceiverNs;
        for (const auto& [r, o] : other.perRank) {
            RankWait& rw = rankWait(r);
            rw.collectiveWaitNs += o.collectiveWaitNs;
            rw.lateSenderNs += o.lateSenderNs;
            rw.lateReceiverNs += o.lateReceiverNs;
        }
        for (const auto& [r, o] : other.strag) {
            Straggler& s = straggler(r);
            s.timesLast += o.timesLast;
            s.instances += o.instances;
            s.inflictedWaitNs += o.inflictedWaitNs;
            s.inflictedInCollectivesNs += o.inflictedInCollectivesNs;
            auto it = other.order.find(r);
            worst(r, s, o.maxInflictedNs, o.exampleEventId, it == other.order.end() ? BlameOrder{} : it->second);
        }
    }

    WaitStates w;
    std::map<int64_t, RankWait> perRank;
    std::map<int64_t, Straggler> strag;
    std::map<int64_t, BlameOrder> order; ///< of each rank's example event

private:
    void worst(int64_t rank, Straggler& s, int64_t ns, int64_t eventId, const BlameOrder& o) {
        if (ns <= 0 || ns < s.maxInflictedNs) return;
        auto it = order.find(rank);
        if (ns == s.maxInflictedNs && it != order.end() && !(o < it->second)) return;
        s.maxInflictedNs = ns;
        s.exampleEventId = eventId;
        order[rank] = o;
    }
};

} // namespace hpcprof::analyzer::detail
