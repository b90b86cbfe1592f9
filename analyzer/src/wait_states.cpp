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

/// The calls' indices ordered by instance (communicator, seq), then rank, then their order.
std::vector<uint32_t> instanceOrder(const std::vector<CollectiveCall>& calls) {
    std::vector<uint32_t> order(calls.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        const CollectiveCall &x = calls[a], &y = calls[b];
        return std::tie(x.communicatorId, x.seq, x.rank, a) < std::tie(y.communicatorId, y.seq, y.rank, b);
    });
    return order;
}

} // namespace

struct CollectiveSweep::Impl {
    WaitTables t;
    CommunicatorSize communicatorSize;
    MemberFn onMember;
    bool keepEventWaits = false;
    std::vector<std::pair<CollectiveCall, bool>> instance; ///< the calls of the open instance
    size_t seen = 0;    ///< calls before it (its first call's place in the sweep)
    size_t largest = 0;

    /// Every member waits from its entry until the last one enters (or its call ends); the sum
    /// is blamed on the last (of equal entries the first in the sweep).
    void waitAtNxN() {
        const BlameOrder sweep{0, int64_t(seen)}; // the instances in (communicator, seq) order
        size_t last = 0;
        for (size_t k = 0; k < instance.size(); ++k)
            if (instance[k].first.ts > instance[last].first.ts) last = k;
        const CollectiveCall& lastCall = instance[last].first;
        int64_t blamed = 0;
        for (const auto& [c, small] : instance) {
            ++t.straggler(c.rank).instances;
            const int64_t wait = memberWait(c, lastCall.ts);
            if (wait > 0 && keepEventWaits) t.w.waitByEvent.add(c.eventId, wait);
            t.rankWait(c.rank).collectiveWaitNs += wait;
            t.w.collectiveWaitNs += wait;
            blamed += wait;
            if (onMember) onMember(c, small, wait);
        }
        if (blamed > 0) {
            ++t.strag[lastCall.rank].timesLast;
            t.blame(lastCall.rank, blamed, lastCall.eventId, sweep, true);
        }
    }

    /// An instance is complete when every member has a call; the size is unknown for some
    /// communicators, then any instance seen on two or more ranks is used.
    void settle() {
        if (instance.empty()) return;
        const size_t n = instance.size();
        largest = std::max(largest, n);
        auto expected = communicatorSize(instance.front().first.communicatorId);
        if (expected ? int64_t(n) == *expected : n >= 2) {
            ++t.w.completeInstances;
            waitAtNxN();
        } else {
            ++t.w.incompleteInstances;
            if (onMember)
                for (const auto& [c, small] : instance) onMember(c, small, 0);
        }
        seen += n;
        instance.clear();
    }
};

CollectiveSweep::CollectiveSweep(const std::vector<int64_t>& ranks, CommunicatorSize communicatorSize,
                                 MemberFn onMember, bool keepEventWaits)
    : m(std::make_unique<Impl>()) {
    m->t = WaitTables(ranks);
    m->communicatorSize = std::move(communicatorSize);
    m->onMember = std::move(onMember);
    m->keepEventWaits = keepEventWaits;
}

CollectiveSweep::~CollectiveSweep() = default;

void CollectiveSweep::add(const CollectiveCall& call, bool small) {
    if (!m->instance.empty() && (m->instance.front().first.communicatorId != call.communicatorId ||
                                 m->instance.front().first.seq != call.seq))
        m->settle();
    m->instance.emplace_back(call, small);
}

size_t CollectiveSweep::largestInstance() const { return std::max(m->largest, m->instance.size()); }

WaitStates CollectiveSweep::finish(const P2pMatcher& messages) {
    m->settle();
    WaitTables& t = m->t;
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

WaitStates computeWaitStates(const CollectiveCalls& collectives, const P2pMatcher& messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    const std::vector<CollectiveCall> calls(collectives.begin(), collectives.end());
    CollectiveSweep sweep(ranks, communicatorSize, {}, true);
    for (uint32_t i : instanceOrder(calls)) sweep.add(calls[i]);
    return sweep.finish(messages);
}

WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks, const CommunicatorSize& communicatorSize) {
    std::map<int64_t, std::vector<P2pCall>> byRank; // each rank's in the list's order
    for (P2pCall& m : messages) byRank[m.rank].push_back(m);
    P2pMatcher matcher(true);
    for (auto& [r, list] : byRank) matcher.addRank(r, std::move(list));
    matcher.finish();
    CollectiveSweep sweep(ranks, communicatorSize, {}, true);
    for (uint32_t i : instanceOrder(collectives)) sweep.add(collectives[i]);
    return sweep.finish(matcher);
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
