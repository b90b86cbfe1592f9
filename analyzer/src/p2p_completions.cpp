// SPDX-License-Identifier: MIT
// Reads the trace's MPI request completions (mpi_completion) into the point-to-point calls that
// the wait-state analysis matches: which wait finished each non-blocking post, and the actual
// source, tag and size a receive turned out to have.
#include <algorithm>
#include <unordered_map>

#include "wait_states.hpp"
#include "trace_access.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::analyzer {

namespace {

/// The scanned posts by event id, built at the first completion (a trace of blocking calls
/// only never needs it): a sorted table, 16 bytes a post.
class PostIndex {
public:
    explicit PostIndex(MessageLists& messages) : m_messages(messages) {}

    /// The message posted by `postId`: a scanned one, else one this load added; nullptr if none.
    P2pCall* find(int64_t postId) {
        if (auto a = m_added.find(postId); a != m_added.end()) return a->second;
        if (!m_built) build();
        auto it = std::lower_bound(m_scanned.begin(), m_scanned.end(), postId,
                                   [](const auto& e, int64_t id) { return e.first < id; });
        return it != m_scanned.end() && it->first == postId ? it->second : nullptr;
    }
    void addedAs(int64_t postId, P2pCall* m) { m_added.insert_or_assign(postId, m); }

private:
    void build() {
        m_built = true;
        for (auto& list : m_messages.ranks)
            for (P2pCall& m : list) m_scanned.emplace_back(m.eventId, &m);
        // Stable: of two posts with one id, the first scanned is found (as a map's emplace kept).
        std::stable_sort(m_scanned.begin(), m_scanned.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    }

    MessageLists& m_messages;
    bool m_built = false;
    std::vector<std::pair<int64_t, P2pCall*>> m_scanned;
    std::unordered_map<int64_t, P2pCall*> m_added;
};

/// The post a completion row belongs to: MPI_I... posts one request per call (the per-rank scan
/// may already have it); MPI_Startall posts several, so every completion of a start is a
/// message of its own.
P2pCall& postOf(schema::Statement& st, const std::string& name, MessageLists& messages, PostIndex& index) {
    const int64_t postId = st.int64(0);
    P2pCall* found = name.rfind("MPI_I", 0) == 0 ? index.find(postId) : nullptr;
    if (found) return *found;
    P2pCall& m = messages.added.emplace_back();
    m.eventId = postId;
    m.rank = st.int64(12);
    m.send = st.text(1) == "send";
    m.ts = st.int64(8);
    m.end = m.ts + st.int64(9);
    index.addedAs(postId, &m);
    return m;
}

} // namespace

Status loadP2pCompletions(const Trace& trace, MessageLists& messages) {
    if (!schema::hasTable(detail::db(trace), schema::table::kMpiCompletion)) return {}; // older trace
    // Primary-key joins only (event.id, track.id, process.id, string.id): no scan of event.
    schema::Statement st(detail::db(trace),
                         "SELECT c.post_event_id, c.kind, c.peer, c.tag, c.bytes, w.id, w.ts, w.dur,"
                         "       p.ts, p.dur, p.communicator_id, n.value, pr.rank"
                         " FROM mpi_completion c"
                         " JOIN event w ON w.id = c.event_id"
                         " JOIN event p ON p.id = c.post_event_id"
                         " JOIN string n ON n.id = p.name_id"
                         " JOIN track t ON t.id = p.track_id"
                         " JOIN process pr ON pr.id = t.process_id"
                         " WHERE pr.rank IS NOT NULL AND c.peer IS NOT NULL");
    if (!st.valid()) return st.error();
    PostIndex index(messages);
    while (st.step()) {
        const std::string name = st.text(11);
        P2pCall& m = postOf(st, name, messages, index);
        m.blocking = false;
        m.peer = st.int64(2);
        if (!st.isNull(3)) m.tag = st.int64(3);
        if (!st.isNull(4)) m.bytes = st.int64(4);
        m.communicatorId = st.isNull(10) ? -1 : st.int64(10);
        m.synchronous = name == "MPI_Issend";
        m.waitEventId = st.int64(5);
        m.sendrecv = m.waitEventId == st.int64(0);
        m.waitTs = st.int64(6);
        m.waitEnd = m.waitTs + st.int64(7);
    }
    return st.error();
}

Status loadP2pCompletions(const Trace& trace, std::vector<P2pCall>& messages) {
    MessageLists lists;
    lists.ranks.push_back(std::move(messages));
    Status st = loadP2pCompletions(trace, lists);
    messages = std::move(lists.ranks.front());
    messages.insert(messages.end(), lists.added.begin(), lists.added.end());
    return st;
}

} // namespace hpcprof::analyzer
