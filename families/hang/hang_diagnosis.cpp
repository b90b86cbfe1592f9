// SPDX-License-Identifier: MIT
// The hang diagnosis from each rank's unfinished calls: which ranks wait in which collective
// instance and who is missing from it, which members of a communicator are in different
// collective calls, and the point-to-point wait chains down to the rank that waits on nobody.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "hang_section.hpp"
#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::analyzer {

namespace {

std::string instanceText(const HangCall& c) {
    return fmt::format("{} #{} on {}", c.name, c.instance.value_or(0), c.communicator);
}

const HangRank* rankOf(const HangSection& s, int64_t rank) {
    auto it = std::lower_bound(s.ranks.begin(), s.ranks.end(), rank,
                               [](const HangRank& r, int64_t v) { return r.rank < v; });
    return it != s.ranks.end() && it->rank == rank ? &*it : nullptr;
}

/// Every collective call in flight, grouped by communicator, then by (operation, instance).
using CollectiveCalls = std::map<std::string, std::map<std::pair<int64_t, std::string>, std::vector<const HangCall*>>>;

CollectiveCalls collectiveCalls(const HangSection& s) {
    CollectiveCalls out;
    for (const HangRank& r : s.ranks)
        if (const HangCall* c = r.current(); c && c->collective())
            out[c->communicator][{*c->instance, c->name}].push_back(c);
    return out;
}

void addCollectives(HangSection& s, const CollectiveCalls& calls,
                    const std::function<std::vector<int64_t>(const std::string&)>& membersOf) {
    for (const auto& [comm, groups] : calls) {
        std::vector<int64_t> members = membersOf(comm);
        for (const auto& [key, list] : groups) {
            CollectiveWait w{comm, list.front()->commSize, key.second, key.first, {}, {}};
            for (const HangCall* c : list) w.ranks.push_back(c->rank);
            std::sort(w.ranks.begin(), w.ranks.end());
            for (int64_t m : members)
                if (!std::binary_search(w.ranks.begin(), w.ranks.end(), m)) w.missing.push_back(m);
            s.collectives.push_back(std::move(w));
        }
        if (groups.size() < 2) continue;
        CollectiveMismatch mm{comm, {}};
        for (const auto& [key, list] : groups)
            for (const HangCall* c : list) mm.calls.emplace_back(c->rank, instanceText(*c));
        std::sort(mm.calls.begin(), mm.calls.end());
        s.mismatches.push_back(std::move(mm));
    }
}

/// The rank `r` waits for through a point-to-point call, -1 = none.
int64_t waitsOn(const HangSection& s, int64_t rank) {
    const HangRank* r = rankOf(s, rank);
    const HangCall* c = r ? r->current() : nullptr;
    return c && c->pointToPoint() ? *c->peer : -1;
}

void addChains(HangSection& s) {
    std::set<int64_t> waitedFor;
    for (const HangRank& r : s.ranks)
        if (int64_t p = waitsOn(s, r.rank); p >= 0) waitedFor.insert(p);
    std::set<int64_t> covered;
    auto walk = [&](int64_t head) {
        WaitChain chain;
        std::set<int64_t> seen;
        for (int64_t r = head; r >= 0; r = waitsOn(s, r)) {
            if (seen.count(r)) {
                chain.cycle = true;
                chain.end = fmt::format("waits for rank {} again: a deadlock cycle", r);
                break;
            }
            seen.insert(r);
            covered.insert(r);
            chain.ranks.push_back(r);
        }
        if (!chain.cycle) {
            const HangRank* last = rankOf(s, chain.ranks.back());
            chain.end = last ? describeRank(*last) : "not recorded (no process of this rank in the trace)";
        }
        if (chain.ranks.size() >= 2) s.chains.push_back(std::move(chain));
    };
    for (const HangRank& r : s.ranks) // heads: waiting on someone, waited for by nobody
        if (waitsOn(s, r.rank) >= 0 && !waitedFor.count(r.rank)) walk(r.rank);
    for (const HangRank& r : s.ranks) // what is left is cycles only
        if (waitsOn(s, r.rank) >= 0 && !covered.count(r.rank)) walk(r.rank);
}

/// The ranks the others wait for: chain ends, missing members of collectives that some wait in
/// (unless they wait themselves in another call of the same communicator: a mismatch).
void addCulprits(HangSection& s) {
    std::set<int64_t> out;
    for (const WaitChain& c : s.chains)
        if (!c.cycle) out.insert(c.ranks.back());
        else out.insert(c.ranks.begin(), c.ranks.end());
    for (const CollectiveWait& w : s.collectives)
        for (int64_t m : w.missing) {
            const HangRank* r = rankOf(s, m);
            const HangCall* c = r ? r->current() : nullptr;
            if (!c || c->communicator != w.communicator) out.insert(m);
        }
    for (const CollectiveMismatch& mm : s.mismatches)
        for (const auto& [rank, call] : mm.calls) out.insert(rank);
    for (const NcclCommunicatorState& c : s.nccl) out.insert(c.behind.begin(), c.behind.end());
    s.culprits.assign(out.begin(), out.end());
}

/// What the ranks that enqueued an instance do: "wait in cudaStreamSynchronize" when they all
/// are inside one call, else each rank's call.
std::string enqueuedState(const NcclCommunicatorState& c) {
    std::set<std::string> calls;
    for (const NcclRankState& r : c.ranks)
        if (r.instance && *r.instance == c.lastInstance) calls.insert(r.blockedIn);
    if (calls.size() == 1)
        return calls.begin()->empty() ? "are inside no recorded call"
                                      : "wait in " + *calls.begin();
    std::string each;
    for (const NcclRankState& r : c.ranks)
        if (r.instance && *r.instance == c.lastInstance)
            each += fmt::format("{}rank {} {}", each.empty() ? "" : ", ", r.rank,
                                r.blockedIn.empty() ? "in no call" : "in " + r.blockedIn);
    return "are: " + each;
}

/// The first NCCL communicator with members behind the furthest instance, in words.
std::string ncclCheck(const HangSection& s) {
    for (const NcclCommunicatorState& c : s.nccl) {
        if (c.behind.empty() || c.enqueued.empty()) continue;
        const HangRank* r = rankOf(s, c.behind.front());
        const NcclRankState* b = nullptr;
        for (const NcclRankState& x : c.ranks)
            if (x.rank == c.behind.front()) b = &x;
        std::string last = b && b->instance ? fmt::format("its last was {} #{}", b->call, *b->instance)
                                            : std::string("it enqueued no collective on it");
        return fmt::format("rank {} never enqueued {} #{} on {} ({}; it is {}); ranks {}, which "
                           "enqueued it, {}: check why rank {} does not reach this collective",
                           c.behind.front(), c.lastCall, c.lastInstance, c.communicator, last,
                           r ? describeRank(*r) : "not recorded", fmt::join(c.enqueued, ","),
                           enqueuedState(c), c.behind.front());
    }
    return {};
}

/// Every member enqueued the furthest instance and some wait for it (inside the call, or in a
/// host synchronisation): the collective itself does not complete.
std::string ncclStuckCheck(const HangSection& s) {
    for (const NcclCommunicatorState& c : s.nccl) {
        bool waiting = false;
        for (const NcclRankState& r : c.ranks)
            waiting |= r.completion == "in_flight" ||
                       (r.completion == "not_seen" && r.blockedIn.find("ynchronize") != std::string::npos);
        if (c.behind.empty() && waiting && c.lastInstance >= 0)
            return fmt::format("every member of {} enqueued {} #{} and it did not complete on "
                               "all of them: the collective itself is stuck (check the network "
                               "and NCCL's own log, NCCL_DEBUG=INFO)", c.communicator, c.lastCall,
                               c.lastInstance);
    }
    return {};
}

std::string firstCheck(const HangSection& s) {
    if (!s.mismatches.empty()) {
        const CollectiveMismatch& mm = s.mismatches.front();
        std::string calls;
        for (const auto& [rank, call] : mm.calls) calls += fmt::format("{}rank {}: {}", calls.empty() ? "" : "; ", rank, call);
        return fmt::format("the members of {} are in different collective calls ({}): check the "
                           "code path that makes these ranks call a different collective, or skip "
                           "one", mm.communicator, calls);
    }
    if (std::string nccl = ncclCheck(s); !nccl.empty()) return nccl;
    for (const CollectiveWait& w : s.collectives)
        if (!w.missing.empty()) {
            const HangRank* r = rankOf(s, w.missing.front());
            return fmt::format("ranks {} wait in {} #{} on {}; rank {} never entered it: it is {}",
                               fmt::join(w.ranks, ","), w.name, w.instance, w.communicator,
                               w.missing.front(), r ? describeRank(*r) : "not recorded");
        }
    if (!s.chains.empty()) {
        const WaitChain& c = s.chains.front();
        if (c.cycle)
            return fmt::format("ranks {} wait for each other in a cycle (a deadlock): check the "
                               "order of their sends and receives", fmt::join(c.ranks, " -> "));
        return fmt::format("rank {}, at the end of the wait chain {}, is {}: check why it does not "
                           "reach the matching call", c.ranks.back(), fmt::join(c.ranks, " -> "), c.end);
    }
    if (std::string stuck = ncclStuckCheck(s); !stuck.empty()) return stuck;
    for (const HangRank& r : s.ranks)
        if (r.current()) return fmt::format("rank {} is {}", r.rank, describeRank(r));
    return {};
}

} // namespace

const HangCall* HangRank::current() const {
    // A thread polling a completion queue is in no call: a call another thread is inside says
    // more about what the rank waits for (a progress thread may poll all along).
    for (const HangCall& c : calls)
        if (c.cls == "communication" && !c.polling()) return &c;
    for (const HangCall& c : calls)
        if (!c.polling()) return &c;
    return calls.empty() ? nullptr : &calls.front();
}

/// What a polling thread polls, and since when it had no success.
static std::string pollingText(const HangCall& c) {
    if (c.name.rfind("ibv_", 0) == 0)
        return fmt::format("polling an RDMA completion queue ({}) that gave no completion since "
                           "its first empty poll", c.name);
    if (c.name.rfind("nccl", 0) == 0)
        return fmt::format("polling {}{}, which answered ncclInProgress since its first poll",
                           c.name, c.communicator.empty() ? "" : " on " + c.communicator);
    return fmt::format("polling {}, which answered not ready since its first poll (the GPU work "
                       "it waits for never finished)", c.name);
}

/// How a point-to-point call names its partner: a wait (on a request) waits "for" the peer.
static std::string_view peerWord(const std::string& call) {
    if (call.rfind("MPI_Wait", 0) == 0) return "for";
    return schema::inFlightPartnerWord(call);
}

std::string describeRank(const HangRank& r) {
    const HangCall* c = r.current();
    if (!c) {
        if (r.lastCall.empty()) return "computing (inside no recorded call; it recorded none)";
        return fmt::format("computing (inside no recorded call since its {} returned)", r.lastCall);
    }
    if (c->polling()) return pollingText(*c);
    std::string what = "in " + c->name;
    if (c->collective()) what = "in " + instanceText(*c);
    else if (c->pointToPoint())
        what += fmt::format(" {} rank {}{} on {}", peerWord(c->name),
                            *c->peer, c->tag ? fmt::format(" (tag {})", *c->tag) : "", c->communicator);
    else if (!c->communicator.empty()) what += " on " + c->communicator;
    if (!c->object.empty()) what += " of " + c->object;
    if (c->requestedBytes && (*c->requestedBytes > 0 || !c->object.empty()))
        what += fmt::format(" ({} bytes requested)", *c->requestedBytes);
    return what;
}

void diagnoseHang(HangSection& s,
                  const std::function<std::vector<int64_t>(const std::string&)>& membersOf) {
    for (HangRank& r : s.ranks)
        std::stable_sort(r.calls.begin(), r.calls.end(),
                         [](const HangCall& a, const HangCall& b) { return a.waitedNs > b.waitedNs; });
    addCollectives(s, collectiveCalls(s), membersOf);
    diagnoseNccl(s, membersOf);
    addChains(s);
    addCulprits(s);
    s.firstCheck = firstCheck(s);
}

} // namespace hpcprof::analyzer
