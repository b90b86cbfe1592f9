// SPDX-License-Identifier: MIT
#include "wait_states.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace hpcprof::analyzer {

namespace {

using CommunicatorSize = std::function<std::optional<int64_t>(int64_t)>;

/// What the analysis accumulates: the totals, every rank's waits and the wait it inflicted.
struct WaitTables {
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
    void blame(int64_t rank, int64_t ns, int64_t eventId) {
        Straggler& s = straggler(rank);
        s.inflictedWaitNs += ns;
        if (ns > s.maxInflictedNs) {
            s.maxInflictedNs = ns;
            s.exampleEventId = eventId;
        }
    }

    WaitStates w;
    std::map<int64_t, RankWait> perRank;
    std::map<int64_t, Straggler> strag;
};

// --- Collectives: wait at N x N. ---

/// Every member waits from its entry until the last one enters (or its call ends); the sum is
/// blamed on the last.
void waitAtNxN(const std::vector<CollectiveCall>& collectives, size_t i, size_t j, WaitTables& t) {
    const InstanceBlame b = blameOf(collectives, i, j);
    const int64_t lastEntry = collectives[b.last].ts;
    for (size_t k = i; k < j; ++k) {
        const auto& c = collectives[k];
        ++t.straggler(c.rank).instances;
        const int64_t wait = memberWait(c, lastEntry);
        t.w.waitByEvent[c.eventId] = wait;
        t.rankWait(c.rank).collectiveWaitNs += wait;
        t.w.collectiveWaitNs += wait;
    }
    if (b.waitNs > 0) {
        ++t.strag[collectives[b.last].rank].timesLast;
        t.blame(collectives[b.last].rank, b.waitNs, collectives[b.last].eventId);
    }
}

void collectiveWaits(std::vector<CollectiveCall>& collectives, const CommunicatorSize& communicatorSize,
                     WaitTables& t) {
    sortByInstance(collectives);
    for (size_t i = 0; i < collectives.size();) {
        const size_t j = instanceEnd(collectives, i);
        const size_t n = j - i;
        auto expected = communicatorSize(collectives[i].communicatorId);
        // An instance is complete when every member has a call; the size is unknown for some
        // communicators, then any instance seen on two or more ranks is used.
        bool complete = expected ? int64_t(n) == *expected : n >= 2;
        if (complete) {
            ++t.w.completeInstances;
            waitAtNxN(collectives, i, j, t);
        } else {
            ++t.w.incompleteInstances;
        }
        i = j;
    }
}

// --- Point-to-point: late sender, late receiver. ---

using MessageKey = std::tuple<int64_t, int64_t, int64_t, int64_t>; // communicator, sender, receiver, tag
using MessageQueues = std::map<MessageKey, std::vector<const P2pCall*>>;

/// Sends and receives by (communicator, sender, receiver, tag). Communicators are used only when
/// every message has one (a caller that does not know them for some calls would otherwise split
/// matching pairs).
void queueMessages(const std::vector<P2pCall>& messages, MessageQueues& sends, MessageQueues& recvs) {
    const bool byCommunicator =
        std::all_of(messages.begin(), messages.end(), [](const P2pCall& m) { return m.communicatorId >= 0; });
    for (const auto& m : messages) {
        const int64_t comm = byCommunicator ? m.communicatorId : -1;
        if (m.send)
            sends[{comm, m.rank, m.peer, m.tag}].push_back(&m);
        else
            recvs[{comm, m.peer, m.rank, m.tag}].push_back(&m);
    }
}

/// A completing call (MPI_Waitall over several peers) waits once, however many of its requests
/// were late: its wait is the largest, blamed on that request's partner.
class CompletionWaits {
public:
    /// `waiter`'s request completed in its wait, where it waited until `partnerTs`.
    void offer(const P2pCall& waiter, const P2pCall& partner, int64_t partnerTs, bool lateSender) {
        if (partnerTs <= waiter.waitTs) return;
        const int64_t wait = std::min(partnerTs, waiter.waitEnd) - waiter.waitTs;
        Wait& c = m_waits[waiter.waitEventId];
        if (wait > c.waitNs) c = {wait, waiter.rank, partner.rank, partner.eventId, lateSender};
    }

    /// Adds each completing call's wait to its rank and blames it, in event id order.
    void addTo(WaitTables& t) const {
        for (const auto& [eventId, c] : m_waits) {
            RankWait& rw = t.rankWait(c.waiterRank);
            t.w.waitByEvent[eventId] += c.waitNs;
            (c.lateSender ? rw.lateSenderNs : rw.lateReceiverNs) += c.waitNs;
            (c.lateSender ? t.w.lateSenderNs : t.w.lateReceiverNs) += c.waitNs;
            t.blame(c.blamedRank, c.waitNs, c.blamedEventId);
        }
    }

private:
    struct Wait {
        int64_t waitNs = 0, waiterRank = 0, blamedRank = 0, blamedEventId = 0;
        bool lateSender = false;
    };
    std::map<int64_t, Wait> m_waits; // by completing event id
};

// A message is available from the send's entry (blocking) or posting (non-blocking); a receive is
// ready from its entry or posting. Both late cases cannot hold at once.

/// Late sender: the receiver waited for the send.
void lateSender(const P2pCall& s, const P2pCall& r, WaitTables& t, CompletionWaits& completions) {
    if (r.blocking && s.ts > r.ts) {
        int64_t wait = std::min(s.ts, r.end) - r.ts;
        if (wait > 0) {
            t.w.waitByEvent[r.eventId] += wait;
            t.rankWait(r.rank).lateSenderNs += wait;
            t.w.lateSenderNs += wait;
            t.blame(s.rank, wait, s.eventId);
        }
    } else if (!r.blocking && r.waitEventId) { // late sender inside the receiver's wait
        completions.offer(r, s, s.ts, true);
    }
}

/// Late receiver: the sender waited for the receive to be posted.
void lateReceiver(const P2pCall& s, const P2pCall& r, WaitTables& t, CompletionWaits& completions) {
    if (s.blocking && r.ts > s.ts && s.end > r.ts) {
        int64_t wait = std::min(r.ts, s.end) - s.ts;
        if (wait > 0) {
            t.w.waitByEvent[s.eventId] += wait;
            t.rankWait(s.rank).lateReceiverNs += wait;
            t.w.lateReceiverNs += wait;
            t.blame(r.rank, wait, r.eventId);
        }
    } else if (!s.blocking && s.waitEventId && (s.synchronous || s.bytes >= kRendezvousBytes)) {
        // Only a send that cannot complete before the receive is posted waits for it; an
        // eager send's wait may be long for other requests of the same call.
        completions.offer(s, r, r.ts, false);
    } else if (s.sendrecv && s.waitEnd > r.ts) {
        // A Sendrecv's send half is a blocking send: still inside the call when the receive
        // was posted, it waited for it (eager limits are often far below kRendezvousBytes:
        // 4 KiB in Open MPI's shared memory). The call's other request is its own receive,
        // whose late sender, if later, wins (a call waits once, for its latest partner).
        completions.offer(s, r, r.ts, false);
    }
}

void p2pWaits(const std::vector<P2pCall>& messages, WaitTables& t) {
    MessageQueues sends, recvs;
    queueMessages(messages, sends, recvs);
    CompletionWaits completions;
    auto byTs = [](const P2pCall* a, const P2pCall* b) { return a->ts < b->ts; };
    for (auto& [key, sv] : sends) {
        auto it = recvs.find(key);
        std::vector<const P2pCall*> empty;
        auto& rv = it == recvs.end() ? empty : it->second;
        // Matched in posting order (MPI's non-overtaking rule).
        std::stable_sort(sv.begin(), sv.end(), byTs);
        std::stable_sort(rv.begin(), rv.end(), byTs);
        size_t pairs = std::min(sv.size(), rv.size());
        t.w.matchedMessages += int64_t(pairs);
        t.w.unmatchedMessages += int64_t(sv.size() + rv.size() - 2 * pairs);
        for (size_t k = 0; k < pairs; ++k) {
            lateSender(*sv[k], *rv[k], t, completions);
            lateReceiver(*sv[k], *rv[k], t, completions);
        }
    }
    for (auto& [key, rv] : recvs)
        if (!sends.count(key)) t.w.unmatchedMessages += int64_t(rv.size());
    completions.addTo(t);
}

} // namespace

void sortByInstance(std::vector<CollectiveCall>& collectives) {
    std::sort(collectives.begin(), collectives.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
        return std::tie(a.communicatorId, a.seq, a.rank) < std::tie(b.communicatorId, b.seq, b.rank);
    });
}

size_t instanceEnd(const std::vector<CollectiveCall>& collectives, size_t i) {
    size_t j = i;
    while (j < collectives.size() && collectives[j].communicatorId == collectives[i].communicatorId &&
           collectives[j].seq == collectives[i].seq)
        ++j;
    return j;
}

int64_t memberWait(const CollectiveCall& c, int64_t lastEntry) {
    return std::max<int64_t>(0, std::min(lastEntry, c.end) - c.ts);
}

InstanceBlame blameOf(const std::vector<CollectiveCall>& collectives, size_t i, size_t j) {
    InstanceBlame b{i, 0};
    for (size_t k = i; k < j; ++k)
        if (collectives[k].ts > collectives[b.last].ts) b.last = k;
    for (size_t k = i; k < j; ++k) b.waitNs += memberWait(collectives[k], collectives[b.last].ts);
    return b;
}

WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    WaitTables t(ranks);
    collectiveWaits(collectives, communicatorSize, t);
    p2pWaits(messages, t);
    WaitStates& w = t.w;
    for (auto& [r, rw] : t.perRank) w.perRank.push_back(rw);
    for (auto& [r, s] : t.strag)
        if (s.inflictedWaitNs > 0) w.stragglers.push_back(s);
    std::sort(w.stragglers.begin(), w.stragglers.end(), [](const Straggler& a, const Straggler& b) {
        return a.inflictedWaitNs != b.inflictedWaitNs ? a.inflictedWaitNs > b.inflictedWaitNs : a.rank < b.rank;
    });
    return std::move(w);
}

} // namespace hpcprof::analyzer
