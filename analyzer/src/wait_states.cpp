// SPDX-License-Identifier: MIT
#include "wait_states.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
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
    void blame(int64_t rank, int64_t ns, int64_t eventId, bool inCollective = false) {
        Straggler& s = straggler(rank);
        s.inflictedWaitNs += ns;
        if (inCollective) s.inflictedInCollectivesNs += ns;
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

/// The calls' indices ordered by instance (communicator, seq), then rank: the calls stay where
/// they are (4 bytes a call instead of a sorted copy of 64).
template <class Calls>
std::vector<uint32_t> instanceOrder(const Calls& calls) {
    std::vector<uint32_t> order(calls.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const CollectiveCall &x = calls[a], &y = calls[b];
        return std::tie(x.communicatorId, x.seq, x.rank, a) < std::tie(y.communicatorId, y.seq, y.rank, b);
    });
    return order;
}

/// Every member waits from its entry until the last one enters (or its call ends); the sum is
/// blamed on the last. The instance is order[i, j).
template <class Calls>
void waitAtNxN(const Calls& calls, const std::vector<uint32_t>& order, size_t i, size_t j, WaitTables& t) {
    size_t last = i;
    for (size_t k = i; k < j; ++k)
        if (calls[order[k]].ts > calls[order[last]].ts) last = k;
    const CollectiveCall& lastCall = calls[order[last]];
    int64_t blamed = 0;
    for (size_t k = i; k < j; ++k) {
        const auto& c = calls[order[k]];
        ++t.straggler(c.rank).instances;
        const int64_t wait = memberWait(c, lastCall.ts);
        if (wait > 0) t.w.waitByEvent.add(c.eventId, wait);
        t.rankWait(c.rank).collectiveWaitNs += wait;
        t.w.collectiveWaitNs += wait;
        blamed += wait;
    }
    if (blamed > 0) {
        ++t.strag[lastCall.rank].timesLast;
        t.blame(lastCall.rank, blamed, lastCall.eventId, true);
    }
}

template <class Calls>
void collectiveWaits(const Calls& calls, const CommunicatorSize& communicatorSize, WaitTables& t) {
    if (calls.size() > UINT32_MAX) { // beyond the index: a sorted copy
        std::vector<CollectiveCall> copy(calls.begin(), calls.end());
        sortByInstance(copy);
        collectiveWaits(copy, communicatorSize, t);
        return;
    }
    const std::vector<uint32_t> order = instanceOrder(calls);
    auto sameInstance = [&](size_t a, size_t b) {
        return calls[order[a]].communicatorId == calls[order[b]].communicatorId &&
               calls[order[a]].seq == calls[order[b]].seq;
    };
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j < order.size() && sameInstance(j, i)) ++j;
        const size_t n = j - i;
        auto expected = communicatorSize(calls[order[i]].communicatorId);
        // An instance is complete when every member has a call; the size is unknown for some
        // communicators, then any instance seen on two or more ranks is used.
        bool complete = expected ? int64_t(n) == *expected : n >= 2;
        if (complete) {
            ++t.w.completeInstances;
            waitAtNxN(calls, order, i, j, t);
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
void queueMessages(const MessageLists& messages, MessageQueues& sends, MessageQueues& recvs) {
    bool byCommunicator = true;
    messages.forEach([&](const P2pCall& m) { byCommunicator = byCommunicator && m.communicatorId >= 0; });
    messages.forEach([&](const P2pCall& m) {
        const int64_t comm = byCommunicator ? m.communicatorId : -1;
        if (m.send)
            sends[{comm, m.rank, m.peer, m.tag}].push_back(&m);
        else
            recvs[{comm, m.peer, m.rank, m.tag}].push_back(&m);
    });
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
            t.w.waitByEvent.add(eventId, c.waitNs);
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
            t.w.waitByEvent.add(r.eventId, wait);
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
            t.w.waitByEvent.add(s.eventId, wait);
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

void p2pWaits(const MessageLists& messages, WaitTables& t) {
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

namespace {

template <class Calls>
WaitStates waitStates(const Calls& collectives, const MessageLists& messages, const std::vector<int64_t>& ranks,
                      const CommunicatorSize& communicatorSize) {
    WaitTables t(ranks);
    collectiveWaits(collectives, communicatorSize, t);
    p2pWaits(messages, t);
    WaitStates& w = t.w;
    w.waitByEvent.finish();
    for (auto& [r, rw] : t.perRank) w.perRank.push_back(rw);
    for (auto& [r, s] : t.strag)
        if (s.inflictedWaitNs > 0) w.stragglers.push_back(s);
    std::sort(w.stragglers.begin(), w.stragglers.end(), [](const Straggler& a, const Straggler& b) {
        return a.inflictedWaitNs != b.inflictedWaitNs ? a.inflictedWaitNs > b.inflictedWaitNs : a.rank < b.rank;
    });
    return std::move(w);
}

} // namespace

WaitStates computeWaitStates(const CollectiveCalls& collectives, const MessageLists& messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    return waitStates(collectives, messages, ranks, communicatorSize);
}

WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    MessageLists lists;
    lists.ranks.push_back(std::move(messages));
    return waitStates(collectives, lists, ranks, communicatorSize);
}

void EventWaits::finish() {
    std::stable_sort(m_items.begin(), m_items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t out = 0;
    for (size_t i = 0; i < m_items.size(); ++i) {
        if (out > 0 && m_items[out - 1].first == m_items[i].first)
            m_items[out - 1].second += m_items[i].second;
        else
            m_items[out++] = m_items[i];
    }
    m_items.resize(out);
    m_items.shrink_to_fit();
}

int64_t EventWaits::of(int64_t eventId) const {
    auto it = std::lower_bound(m_items.begin(), m_items.end(), eventId,
                               [](const auto& e, int64_t id) { return e.first < id; });
    return it != m_items.end() && it->first == eventId ? it->second : 0;
}

int64_t EventWaits::at(int64_t eventId) const {
    auto it = std::lower_bound(m_items.begin(), m_items.end(), eventId,
                               [](const auto& e, int64_t id) { return e.first < id; });
    if (it == m_items.end() || it->first != eventId) throw std::out_of_range("EventWaits::at");
    return it->second;
}

} // namespace hpcprof::analyzer
