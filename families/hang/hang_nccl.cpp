// SPDX-License-Identifier: MIT
// NCCL communicators in the hang diagnosis. A rank hangs in NCCL mostly outside any NCCL call:
// ncclAllReduce returned at enqueue, and the host waits (cudaStreamSynchronize, an event, the
// device) for a kernel whose peers never arrive. So per communicator the diagnosis takes each
// member's last enqueued collective instance (from the recorded NCCL calls), whether its
// completion was seen, and the call the rank is blocked in; members that never enqueued the
// furthest instance are what the others wait for, like a rank missing from an MPI collective.
#include <algorithm>
#include <map>
#include <set>

#include "hang_section.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::analyzer {

namespace {

using schema::Category;

/// Each rank's last collective (its highest instance) on each NCCL communicator; the agent's own
/// calls only (the profiler plugin's nccl:* events repeat them).
constexpr const char* kLastCollectives =
    "SELECT cm.key, cm.size, p.rank, MAX(e.seq), s.value, e.id, e.ts + e.dur, e.correlation_id,"
    " p.id, e.id IN (SELECT event_id FROM event_unfinished)"
    " FROM event e JOIN communicator cm ON cm.id = e.communicator_id"
    " JOIN track t ON t.id = e.track_id JOIN process p ON p.id = t.process_id"
    " JOIN string s ON s.id = e.name_id"
    " WHERE cm.kind = 'nccl' AND e.seq IS NOT NULL AND p.rank IS NOT NULL AND e.category_id = ?"
    " AND s.value NOT LIKE 'nccl:%' GROUP BY cm.id, p.rank ORDER BY cm.key, p.rank";

/// A GPU kernel of the process correlated with the call: its end was recorded.
constexpr const char* kKernelEnded =
    "SELECT 1 FROM track t JOIN event k ON k.id BETWEEN t.first_event_id AND t.last_event_id"
    " WHERE t.process_id = ? AND t.kind != 'cpu_thread' AND k.correlation_id = ?"
    " AND k.category_id IN (?, ?) LIMIT 1";

/// A host synchronisation of the process (CUPTI's synchronisation activity, or the API call) that
/// began after the enqueue and returned. Any stream's: the trace does not say which stream a
/// collective and a synchronisation were on, so this is evidence, not proof.
constexpr const char* kSyncReturned =
    "SELECT 1 FROM track t JOIN event h ON h.id BETWEEN t.first_event_id AND t.last_event_id"
    " JOIN string s ON s.id = h.name_id"
    " WHERE t.process_id = ? AND h.ts >= ?"
    " AND (h.category_id = ? OR (h.category_id = ? AND s.value LIKE '%Synchronize%'))"
    " AND h.id NOT IN (SELECT event_id FROM event_unfinished) LIMIT 1";

bool exists(schema::Statement& st) {
    bool found = st.step();
    st.reset();
    return found;
}

std::string completionOf(sqlite3* db, const schema::Statement& row) {
    if (row.int64(9)) return "in_flight";
    int64_t process = row.int64(8);
    if (!row.isNull(7)) {
        schema::Statement k(db, kKernelEnded);
        k.bind(1, process);
        k.bind(2, row.int64(7));
        k.bind(3, int64_t(Category::GpuKernel));
        k.bind(4, int64_t(Category::GpuCommKernel));
        if (exists(k)) return "kernel_ended";
    }
    schema::Statement h(db, kSyncReturned);
    h.bind(1, process);
    h.bind(2, row.int64(6));
    h.bind(3, int64_t(Category::GpuSync));
    h.bind(4, int64_t(Category::CudaApi));
    return exists(h) ? "host_sync_returned" : "not_seen";
}

const HangRank* rankOf(const HangSection& s, int64_t rank) {
    for (const HangRank& r : s.ranks)
        if (r.rank == rank) return &r;
    return nullptr;
}

std::string blockedIn(const HangSection& s, int64_t rank) {
    const HangRank* r = rankOf(s, rank);
    const HangCall* c = r ? r->current() : nullptr;
    return c ? c->name : std::string();
}

} // namespace

Status readNcclStates(sqlite3* db, HangSection& s) {
    schema::Statement st(db, kLastCollectives);
    if (!st.valid()) return st.error();
    st.bind(1, int64_t(Category::NcclCollective));
    while (st.step()) {
        std::string key = st.text(0);
        if (s.nccl.empty() || s.nccl.back().communicator != key)
            s.nccl.push_back(NcclCommunicatorState{key, st.isNull(1) ? -1 : st.int64(1), {}, -1, {}, {}, {}});
        NcclRankState r;
        r.rank = st.int64(2);
        r.instance = st.int64(3);
        r.call = st.text(4);
        r.completion = completionOf(db, st);
        s.nccl.back().ranks.push_back(std::move(r));
    }
    return st.error();
}

namespace {

/// Adds the members that enqueued no collective on `c` (the trace knows them only as members).
void addSilentMembers(NcclCommunicatorState& c, const std::vector<int64_t>& members) {
    std::set<int64_t> known;
    for (const NcclRankState& r : c.ranks) known.insert(r.rank);
    for (int64_t m : members)
        if (!known.count(m)) c.ranks.push_back(NcclRankState{m, std::nullopt, {}, "not_seen", {}});
    std::sort(c.ranks.begin(), c.ranks.end(),
              [](const NcclRankState& a, const NcclRankState& b) { return a.rank < b.rank; });
}

/// Members that enqueued the furthest instance as different collectives: a mismatch.
void addMismatch(HangSection& s, const NcclCommunicatorState& c) {
    std::set<std::string> calls;
    for (const NcclRankState& r : c.ranks)
        if (r.instance && *r.instance == c.lastInstance) calls.insert(r.call);
    if (calls.size() < 2) return;
    for (const CollectiveMismatch& m : s.mismatches)
        if (m.communicator == c.communicator) return; // the calls in flight said it already
    CollectiveMismatch mm{c.communicator, {}};
    for (const NcclRankState& r : c.ranks)
        if (r.instance && *r.instance == c.lastInstance)
            mm.calls.emplace_back(r.rank, r.call + " #" + std::to_string(*r.instance) + " on " + c.communicator);
    s.mismatches.push_back(std::move(mm));
}

} // namespace

void diagnoseNccl(HangSection& s, const std::function<std::vector<int64_t>(const std::string&)>& membersOf) {
    for (NcclCommunicatorState& c : s.nccl) {
        addSilentMembers(c, membersOf(c.communicator));
        for (NcclRankState& r : c.ranks) r.blockedIn = blockedIn(s, r.rank);
        for (const NcclRankState& r : c.ranks)
            if (r.instance && *r.instance > c.lastInstance) {
                c.lastInstance = *r.instance;
                c.lastCall = r.call;
            }
        for (const NcclRankState& r : c.ranks)
            (r.instance && *r.instance == c.lastInstance ? c.enqueued : c.behind).push_back(r.rank);
        addMismatch(s, c);
    }
}

} // namespace hpcprof::analyzer
