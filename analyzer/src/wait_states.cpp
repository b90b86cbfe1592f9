// SPDX-License-Identifier: MIT
#include "wait_states.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace hpcprof::analyzer {

WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks,
                             const std::function<std::optional<int64_t>(int64_t)>& communicatorSize) {
    WaitStates w;
    std::map<int64_t, RankWait> perRank;
    std::map<int64_t, Straggler> strag;
    for (int64_t r : ranks) {
        perRank[r].rank = r;
        strag[r].rank = r;
    }
    auto blame = [&](int64_t rank, int64_t ns, int64_t eventId) {
        Straggler& s = strag[rank];
        s.rank = rank;
        s.inflictedWaitNs += ns;
        if (ns > s.maxInflictedNs) {
            s.maxInflictedNs = ns;
            s.exampleEventId = eventId;
        }
    };

    // --- Collectives: wait at N x N. ---
    std::sort(collectives.begin(), collectives.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
        return std::tie(a.communicatorId, a.seq, a.rank) < std::tie(b.communicatorId, b.seq, b.rank);
    });
    for (size_t i = 0; i < collectives.size();) {
        size_t j = i;
        while (j < collectives.size() && collectives[j].communicatorId == collectives[i].communicatorId &&
               collectives[j].seq == collectives[i].seq)
            ++j;
        const size_t n = j - i;
        auto expected = communicatorSize(collectives[i].communicatorId);
        // An instance is complete when every member has a call; the size is unknown for some
        // communicators, then any instance seen on two or more ranks is used.
        bool complete = expected ? int64_t(n) == *expected : n >= 2;
        if (!complete) {
            ++w.incompleteInstances;
            i = j;
            continue;
        }
        ++w.completeInstances;
        size_t last = i;
        for (size_t k = i; k < j; ++k)
            if (collectives[k].ts > collectives[last].ts) last = k;
        const int64_t lastEntry = collectives[last].ts;
        int64_t inflicted = 0;
        for (size_t k = i; k < j; ++k) {
            const auto& c = collectives[k];
            strag[c.rank].rank = c.rank;
            ++strag[c.rank].instances;
            int64_t wait = std::max<int64_t>(0, std::min(lastEntry, c.end) - c.ts);
            w.waitByEvent[c.eventId] = wait;
            perRank[c.rank].rank = c.rank;
            perRank[c.rank].collectiveWaitNs += wait;
            w.collectiveWaitNs += wait;
            inflicted += wait;
        }
        if (inflicted > 0) {
            ++strag[collectives[last].rank].timesLast;
            blame(collectives[last].rank, inflicted, collectives[last].eventId);
        }
        i = j;
    }

    // --- Point-to-point: late sender, late receiver. ---
    // Communicators are used only when every message has one (a caller that does not know them
    // for some calls would otherwise split matching pairs).
    const bool byCommunicator =
        std::all_of(messages.begin(), messages.end(), [](const P2pCall& m) { return m.communicatorId >= 0; });
    using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>; // communicator, sender, receiver, tag
    std::map<Key, std::vector<const P2pCall*>> sends, recvs;
    for (const auto& m : messages) {
        const int64_t comm = byCommunicator ? m.communicatorId : -1;
        if (m.send)
            sends[{comm, m.rank, m.peer, m.tag}].push_back(&m);
        else
            recvs[{comm, m.peer, m.rank, m.tag}].push_back(&m);
    }
    // A completing call (MPI_Waitall over several peers) waits once, however many of its requests
    // were late: its wait is the largest, blamed on that request's partner.
    struct CompletionWait {
        int64_t waitNs = 0, waiterRank = 0, blamedRank = 0, blamedEventId = 0;
        bool lateSender = false;
    };
    std::map<int64_t, CompletionWait> completionWaits; // by completing event id
    auto offerCompletion = [&](const P2pCall& waiter, const P2pCall& partner, int64_t partnerTs,
                               bool lateSender) {
        if (partnerTs <= waiter.waitTs) return;
        const int64_t wait = std::min(partnerTs, waiter.waitEnd) - waiter.waitTs;
        CompletionWait& c = completionWaits[waiter.waitEventId];
        if (wait > c.waitNs)
            c = {wait, waiter.rank, partner.rank, partner.eventId, lateSender};
    };
    auto byTs = [](const P2pCall* a, const P2pCall* b) { return a->ts < b->ts; };
    for (auto& [key, sv] : sends) {
        auto it = recvs.find(key);
        std::vector<const P2pCall*> empty;
        auto& rv = it == recvs.end() ? empty : it->second;
        std::stable_sort(sv.begin(), sv.end(), byTs);
        std::stable_sort(rv.begin(), rv.end(), byTs);
        size_t pairs = std::min(sv.size(), rv.size());
        w.matchedMessages += int64_t(pairs);
        w.unmatchedMessages += int64_t(sv.size() + rv.size() - 2 * pairs);
        for (size_t k = 0; k < pairs; ++k) {
            const P2pCall& s = *sv[k];
            const P2pCall& r = *rv[k];
            // A message is available from the send's entry (blocking) or posting (non-blocking);
            // a receive is ready from its entry or posting. Both late cases cannot hold at once.
            if (r.blocking && s.ts > r.ts) { // late sender: the receiver waited
                int64_t wait = std::min(s.ts, r.end) - r.ts;
                if (wait > 0) {
                    perRank[r.rank].rank = r.rank;
                    perRank[r.rank].lateSenderNs += wait;
                    w.lateSenderNs += wait;
                    blame(s.rank, wait, s.eventId);
                }
            } else if (!r.blocking && r.waitEventId) { // late sender inside the receiver's wait
                offerCompletion(r, s, s.ts, true);
            }
            if (s.blocking && r.ts > s.ts && s.end > r.ts) { // late receiver
                int64_t wait = std::min(r.ts, s.end) - s.ts;
                if (wait > 0) {
                    perRank[s.rank].rank = s.rank;
                    perRank[s.rank].lateReceiverNs += wait;
                    w.lateReceiverNs += wait;
                    blame(r.rank, wait, r.eventId);
                }
            } else if (!s.blocking && s.waitEventId && (s.synchronous || s.bytes >= kRendezvousBytes)) {
                // Only a send that cannot complete before the receive is posted waits for it; an
                // eager send's wait may be long for other requests of the same call.
                offerCompletion(s, r, r.ts, false);
            }
        }
    }
    for (auto& [key, rv] : recvs)
        if (!sends.count(key)) w.unmatchedMessages += int64_t(rv.size());
    for (const auto& [eventId, c] : completionWaits) {
        RankWait& rw = perRank[c.waiterRank];
        rw.rank = c.waiterRank;
        (c.lateSender ? rw.lateSenderNs : rw.lateReceiverNs) += c.waitNs;
        (c.lateSender ? w.lateSenderNs : w.lateReceiverNs) += c.waitNs;
        blame(c.blamedRank, c.waitNs, c.blamedEventId);
    }

    for (auto& [r, rw] : perRank) w.perRank.push_back(rw);
    for (auto& [r, s] : strag)
        if (s.inflictedWaitNs > 0) w.stragglers.push_back(s);
    std::sort(w.stragglers.begin(), w.stragglers.end(), [](const Straggler& a, const Straggler& b) {
        return a.inflictedWaitNs != b.inflictedWaitNs ? a.inflictedWaitNs > b.inflictedWaitNs : a.rank < b.rank;
    });
    return w;
}

} // namespace hpcprof::analyzer
