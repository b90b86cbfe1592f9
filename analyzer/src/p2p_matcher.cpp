// SPDX-License-Identifier: MIT
#include "p2p_matcher.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "wait_states.hpp"
#include "wait_tables.hpp"

namespace hpcprof::analyzer {

namespace {

using detail::BlameOrder;
using detail::WaitTables;

/// One completing call (MPI_Wait*, MPI_Test*, MPI_Sendrecv): it waits once, however many of its
/// requests were late: the largest wait, blamed on that request's partner.
struct Completion {
    int64_t waitNs = 0, waiterRank = 0, blamedRank = 0, blamedEventId = 0;
    bool lateSender = false;
    bool offered = false; ///< some request's partner came after the call began
    bool small = false;   ///< the completing call is among its rank's small calls
    BlameOrder order;     ///< of the request that set the wait
    int64_t unresolved = 0; ///< its requests whose partner rank has not finished yet
};

/// The messages from one rank to another: the sender's sends, the receiver's receives.
struct Direction {
    std::vector<P2pCall> sends, recvs;
};

} // namespace

struct P2pMatcher::Impl {
    bool keepEventWaits = false;
    WaitTables t;
    std::map<int64_t, int64_t> smallWaits; ///< by rank
    std::map<std::pair<int64_t, int64_t>, Direction> pending; ///< (sender, receiver)
    std::set<int64_t> done; ///< ranks that handed their messages over
    std::unordered_map<int64_t, Completion> completions; ///< by completing event id

    /// `eventId` of `rank` waited `ns` inside it.
    void waited(int64_t rank, int64_t eventId, int64_t ns, bool small) {
        if (keepEventWaits) t.w.waitByEvent.add(eventId, ns);
        if (small) smallWaits[rank] += ns;
    }

    /// `waiter`'s request completed in its wait, where it waited until `partnerTs`.
    void offer(const P2pCall& waiter, const P2pCall& partner, int64_t partnerTs, bool lateSender,
               const BlameOrder& order) {
        if (partnerTs <= waiter.waitTs) return;
        const int64_t wait = std::min(partnerTs, waiter.waitEnd) - waiter.waitTs;
        Completion& c = completions[waiter.waitEventId];
        c.offered = true;
        if (wait > c.waitNs || (wait == c.waitNs && wait > 0 && order < c.order)) {
            c.waitNs = wait;
            c.waiterRank = waiter.rank;
            c.blamedRank = partner.rank;
            c.blamedEventId = partner.eventId;
            c.lateSender = lateSender;
            c.small = waiter.waitSmall;
            c.order = order;
        }
    }

    /// The completing call `eventId` has no request left to match: its wait is final.
    void settle(int64_t eventId, const Completion& c) {
        if (!c.offered) return;
        addWait(c.lateSender, c.waiterRank, eventId, c.small, c.waitNs, c.blamedRank, c.blamedEventId, {2, eventId});
    }

    /// One point-to-point wait: `waiterRank`'s call `eventId` waited `ns` for `blamedRank`'s
    /// call `blamedEventId` (a late sender, or a late receiver): summed and blamed.
    void addWait(bool lateSender, int64_t waiterRank, int64_t eventId, bool small, int64_t ns, int64_t blamedRank,
                 int64_t blamedEventId, const BlameOrder& order) {
        waited(waiterRank, eventId, ns, small);
        RankWait& rw = t.rankWait(waiterRank);
        (lateSender ? rw.lateSenderNs : rw.lateReceiverNs) += ns;
        (lateSender ? t.w.lateSenderNs : t.w.lateReceiverNs) += ns;
        t.blame(blamedRank, ns, blamedEventId, order);
    }

    void resolve(const P2pCall& m) {
        if (!m.waitEventId) return;
        auto it = completions.find(m.waitEventId);
        if (it == completions.end() || --it->second.unresolved > 0) return;
        settle(it->first, it->second);
        completions.erase(it);
    }

    // A message is available from the send's entry (blocking) or posting (non-blocking); a
    // receive is ready from its entry or posting. Both late cases cannot hold at once.

    /// Late sender: the receiver waited for the send.
    void lateSender(const P2pCall& s, const P2pCall& r, const BlameOrder& order) {
        if (r.blocking && s.ts > r.ts) {
            const int64_t wait = std::min(s.ts, r.end) - r.ts;
            if (wait > 0) addWait(true, r.rank, r.eventId, r.small, wait, s.rank, s.eventId, order);
        } else if (!r.blocking && r.waitEventId) { // late sender inside the receiver's wait
            offer(r, s, s.ts, true, order);
        }
    }

    /// Late receiver: the sender waited for the receive to be posted.
    void lateReceiver(const P2pCall& s, const P2pCall& r, const BlameOrder& order) {
        if (s.blocking && r.ts > s.ts && s.end > r.ts) {
            const int64_t wait = std::min(r.ts, s.end) - s.ts;
            if (wait > 0) addWait(false, s.rank, s.eventId, s.small, wait, r.rank, r.eventId, order);
        } else if (!s.blocking && s.waitEventId && (s.synchronous || s.bytes >= kRendezvousBytes)) {
            // Only a send that cannot complete before the receive is posted waits for it; an
            // eager send's wait may be long for other requests of the same call.
            offer(s, r, r.ts, false, order);
        } else if (s.sendrecv && s.waitEnd > r.ts) {
            // A Sendrecv's send half is a blocking send: still inside the call when the receive
            // was posted, it waited for it (eager limits are often far below kRendezvousBytes:
            // 4 KiB in Open MPI's shared memory). The call's other request is its own receive,
            // whose late sender, if later, wins (a call waits once, for its latest partner).
            offer(s, r, r.ts, false, order);
        }
    }

    void match(int64_t sender, int64_t receiver, Direction& d);
    void addRank(int64_t rank, std::vector<P2pCall> messages);
};

namespace {

/// The (communicator, tag) messages are matched by; communicators only when every message of
/// the direction has one (a caller that does not know them for some calls would otherwise split
/// matching pairs).
struct MatchKey {
    bool byCommunicator = true;
    std::pair<int64_t, int64_t> operator()(const P2pCall& m) const {
        return {byCommunicator ? m.communicatorId : -1, m.tag};
    }
};

/// From sends[i] and recvs[j] on: the ends of the runs of the smaller key (both, when equal).
std::pair<size_t, size_t> nextRuns(const Direction& d, size_t i, size_t j, const MatchKey& key) {
    auto runEnd = [&](const std::vector<P2pCall>& v, size_t k) {
        size_t e = k;
        while (e < v.size() && key(v[e]) == key(v[k])) ++e;
        return e;
    };
    const bool sendsLeft = i < d.sends.size(), recvsLeft = j < d.recvs.size();
    if (!recvsLeft || (sendsLeft && key(d.sends[i]) < key(d.recvs[j]))) return {runEnd(d.sends, i), j};
    if (!sendsLeft || key(d.recvs[j]) < key(d.sends[i])) return {i, runEnd(d.recvs, j)};
    return {runEnd(d.sends, i), runEnd(d.recvs, j)};
}

} // namespace

namespace detail {

/// Calls come in time order from the pass, with few keys (tags) between a pair of ranks: then
/// they are dealt out by key, each key's in the order they came (a stable sort moved every call
/// about log2(n) times: 6 % of a report).
void sortForMatching(std::vector<P2pCall>& calls, bool byCommunicator) {
    const MatchKey key{byCommunicator};
    using Key = std::pair<int64_t, int64_t>;
    auto before = [&](const P2pCall& a, const P2pCall& b) {
        return std::make_pair(key(a), a.ts) < std::make_pair(key(b), b.ts);
    };
    const bool inTimeOrder = std::is_sorted(calls.begin(), calls.end(),
                                            [](const P2pCall& a, const P2pCall& b) { return a.ts < b.ts; });
    std::map<Key, size_t> counts; // then: where each key's calls start
    if (inTimeOrder) {
        for (const P2pCall& c : calls)
            if (++counts[key(c)] == 1 && counts.size() > 64) break; // many keys: the sort is as good
    }
    if (!inTimeOrder || counts.size() > 64) {
        std::stable_sort(calls.begin(), calls.end(), before);
        return;
    }
    if (counts.size() == 1) return;
    size_t at = 0;
    for (auto& [k, n] : counts) at += std::exchange(n, at);
    std::vector<P2pCall> out(calls.size());
    for (const P2pCall& c : calls) out[counts[key(c)]++] = c;
    calls.swap(out);
}

} // namespace detail

/// Matches the messages from `sender` to `receiver` by (communicator, tag) in posting order
/// (MPI's non-overtaking rule).
void P2pMatcher::Impl::match(int64_t sender, int64_t receiver, Direction& d) {
    MatchKey key;
    for (const auto* list : {&d.sends, &d.recvs})
        for (const P2pCall& m : *list) key.byCommunicator = key.byCommunicator && m.communicatorId >= 0;
    // Stable: of two posts at one time, the rank's first is matched first.
    detail::sortForMatching(d.sends, key.byCommunicator);
    detail::sortForMatching(d.recvs, key.byCommunicator);
    for (size_t i = 0, j = 0; i < d.sends.size() || j < d.recvs.size();) {
        const auto [si, rj] = nextRuns(d, i, j, key); // sends [i, si), receives [j, rj): one key
        const size_t pairs = std::min(si - i, rj - j);
        t.w.matchedMessages += int64_t(pairs);
        t.w.unmatchedMessages += int64_t((si - i) + (rj - j) - 2 * pairs);
        for (size_t k = 0; k < pairs; ++k) {
            const P2pCall &s = d.sends[i + k], &r = d.recvs[j + k];
            const BlameOrder order{1, key(s).first, sender, receiver, s.tag, int64_t(k)};
            lateSender(s, r, order);
            lateReceiver(s, r, order);
        }
        i = si;
        j = rj;
    }
    for (const auto* list : {&d.sends, &d.recvs})
        for (const P2pCall& m : *list) resolve(m);
}

void P2pMatcher::Impl::addRank(int64_t rank, std::vector<P2pCall> messages) {
    for (const P2pCall& m : messages)
        if (m.waitEventId) ++completions[m.waitEventId].unresolved;
    // The rank's directions (one per peer and way: few), counted first so that each one's lists
    // are sized once; a message's direction is tried against the previous message's first (they
    // come in runs). Per message, a look-up among all pending directions and a growing list
    // were ~5 % of a report with many messages.
    struct Touched {
        size_t sends = 0, recvs = 0;
        Direction* d = nullptr;
    };
    std::map<std::pair<int64_t, int64_t>, Touched> touched;
    auto directionOf = [rank](const P2pCall& m) { return m.send ? std::make_pair(rank, m.peer) : std::make_pair(m.peer, rank); };
    auto each = [&](auto&& fn) {
        std::pair<int64_t, int64_t> lastDir{INT64_MIN, INT64_MIN};
        Touched* last = nullptr;
        for (P2pCall& m : messages) {
            const auto dir = directionOf(m);
            if (!last || dir != lastDir) last = &touched[dir], lastDir = dir;
            fn(m, *last);
        }
    };
    each([](const P2pCall& m, Touched& t) { ++(m.send ? t.sends : t.recvs); });
    for (auto& [dir, t] : touched) {
        t.d = &pending[dir];
        t.d->sends.reserve(t.d->sends.size() + t.sends);
        t.d->recvs.reserve(t.d->recvs.size() + t.recvs);
    }
    each([](const P2pCall& m, Touched& t) { (m.send ? t.d->sends : t.d->recvs).push_back(m); });
    std::vector<P2pCall>().swap(messages);
    done.insert(rank);
    for (const auto& [dir, t] : touched) {
        const int64_t other = dir.first == rank ? dir.second : dir.first;
        if (!done.count(other)) continue;
        match(dir.first, dir.second, *t.d);
        pending.erase(dir);
    }
}

P2pMatcher::P2pMatcher(bool keepEventWaits) : m(std::make_unique<Impl>()) { m->keepEventWaits = keepEventWaits; }
P2pMatcher::~P2pMatcher() = default;
P2pMatcher::P2pMatcher(P2pMatcher&&) noexcept = default;
P2pMatcher& P2pMatcher::operator=(P2pMatcher&&) noexcept = default;

void P2pMatcher::addRank(int64_t rank, std::vector<P2pCall> messages) { m->addRank(rank, std::move(messages)); }

void P2pMatcher::finish() {
    for (auto& [dir, d] : m->pending) m->match(dir.first, dir.second, d);
    m->pending.clear();
    for (const auto& [id, c] : m->completions) m->settle(id, c); // none left once all are matched
    m->completions.clear();
}

size_t P2pMatcher::pendingMessages() const {
    size_t n = 0;
    for (const auto& [dir, d] : m->pending) n += d.sends.size() + d.recvs.size();
    return n;
}

const detail::WaitTables& P2pMatcher::tables() const { return m->t; }
const std::map<int64_t, int64_t>& P2pMatcher::smallCallWaitNs() const { return m->smallWaits; }

} // namespace hpcprof::analyzer
