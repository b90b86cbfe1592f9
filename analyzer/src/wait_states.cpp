// SPDX-License-Identifier: MIT
#include "wait_states.hpp"

#include "wait_tables.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace hpcprof::analyzer {

namespace {

using CommunicatorSize = std::function<std::optional<int64_t>(int64_t)>;

using detail::BlameOrder;
using detail::WaitTables;

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
    const BlameOrder sweep{0, int64_t(i)}; // the instances in (communicator, seq) order
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
        t.blame(lastCall.rank, blamed, lastCall.eventId, sweep, true);
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
WaitStates waitStates(const Calls& collectives, const P2pMatcher& messages, const std::vector<int64_t>& ranks,
                      const CommunicatorSize& communicatorSize) {
    WaitTables t(ranks);
    collectiveWaits(collectives, communicatorSize, t);
    t.merge(messages.tables());
    WaitStates& w = t.w;
    w.waitByEvent.merge(messages.tables().w.waitByEvent);
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

WaitStates computeWaitStates(const CollectiveCalls& collectives, const P2pMatcher& messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    return waitStates(collectives, messages, ranks, communicatorSize);
}

WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    std::map<int64_t, std::vector<P2pCall>> byRank; // each rank's in the list's order
    for (P2pCall& m : messages) byRank[m.rank].push_back(m);
    P2pMatcher matcher(true);
    for (auto& [r, list] : byRank) matcher.addRank(r, std::move(list));
    matcher.finish();
    return waitStates(collectives, matcher, ranks, communicatorSize);
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
