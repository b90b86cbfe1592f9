// SPDX-License-Identifier: MIT
// Reads the trace's MPI request completions (mpi_completion) into the point-to-point calls that
// the wait-state analysis matches: which wait finished each non-blocking post, and the actual
// source, tag and size a receive turned out to have. The analysis reads them rank by rank, by
// the id ranges of the rank's tracks (the completing call's id is the table's key), so no more
// than one rank's completions are held at a time.
#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "wait_states.hpp"
#include "trace_access.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::analyzer {

namespace {

// Primary-key joins only (event.id, track.id, process.id, string.id): no scan of event.
constexpr const char* kSelect =
    "SELECT c.event_id, c.request, c.post_event_id, c.kind, c.peer, c.tag, c.bytes, w.ts, w.dur,"
    "       p.ts, p.dur, p.communicator_id, n.value, pr.rank"
    " FROM mpi_completion c"
    " JOIN event w ON w.id = c.event_id"
    " JOIN event p ON p.id = c.post_event_id"
    " JOIN string n ON n.id = p.name_id"
    " JOIN track t ON t.id = p.track_id"
    " JOIN process pr ON pr.id = t.process_id"
    " WHERE pr.rank IS NOT NULL AND c.peer IS NOT NULL";

P2pCompletion rowOf(schema::Statement& st) {
    P2pCompletion c;
    c.waitEventId = st.int64(0);
    c.request = st.int64(1);
    c.postEventId = st.int64(2);
    c.send = st.text(3) == "send";
    c.peer = st.int64(4);
    c.hasTag = !st.isNull(5);
    if (c.hasTag) c.tag = st.int64(5);
    c.hasBytes = !st.isNull(6);
    if (c.hasBytes) c.bytes = st.int64(6);
    c.waitTs = st.int64(7);
    c.waitDur = st.int64(8);
    c.postTs = st.int64(9);
    c.postDur = st.int64(10);
    c.communicatorId = st.isNull(11) ? -1 : st.int64(11);
    const std::string name = st.text(12);
    c.postedByI = name.rfind("MPI_I", 0) == 0;
    c.synchronous = name == "MPI_Issend";
    c.rank = st.int64(13);
    return c;
}

/// The scanned posts by event id, built at the first completion of an MPI_I... post: a sorted
/// table, 16 bytes a post; and the posts this load added.
class PostIndex {
public:
    PostIndex(std::vector<P2pCall>& messages, size_t scanned) : m_messages(messages), m_scanned(scanned) {}

    /// The message posted by `postId` (an index into messages): a scanned one, else one this
    /// load added; npos if none.
    size_t find(int64_t postId) {
        if (auto a = m_added.find(postId); a != m_added.end()) return a->second;
        if (!m_built) build();
        auto it = std::lower_bound(m_byId.begin(), m_byId.end(), postId,
                                   [](const auto& e, int64_t id) { return e.first < id; });
        return it != m_byId.end() && it->first == postId ? it->second : npos;
    }
    void addedAs(int64_t postId, size_t i) { m_added.insert_or_assign(postId, i); }
    static constexpr size_t npos = size_t(-1);

private:
    void build() {
        m_built = true;
        for (size_t i = 0; i < m_scanned; ++i) m_byId.emplace_back(m_messages[i].eventId, i);
        // Stable: of two posts with one id, the first scanned is found.
        std::stable_sort(m_byId.begin(), m_byId.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }

    std::vector<P2pCall>& m_messages;
    size_t m_scanned;
    bool m_built = false;
    std::vector<std::pair<int64_t, size_t>> m_byId;
    std::unordered_map<int64_t, size_t> m_added;
};

/// The post a completion row belongs to: MPI_I... posts one request per call (the per-rank scan
/// may already have it); MPI_Startall posts several, so every completion of a start is a
/// message of its own.
P2pCall& postOf(const P2pCompletion& c, std::vector<P2pCall>& messages, PostIndex& index) {
    const size_t found = c.postedByI ? index.find(c.postEventId) : PostIndex::npos;
    if (found != PostIndex::npos) return messages[found];
    P2pCall& m = messages.emplace_back();
    m.eventId = c.postEventId;
    m.rank = c.rank;
    m.send = c.send;
    m.ts = c.postTs;
    m.end = m.ts + c.postDur;
    index.addedAs(c.postEventId, messages.size() - 1);
    return m;
}

} // namespace

schema::Statement trackCompletionsQuery(const Trace& trace) {
    if (!schema::hasTable(detail::db(trace), schema::table::kMpiCompletion)) return {}; // older trace
    return schema::Statement(detail::db(trace), std::string(kSelect) +
                                                    " AND c.event_id BETWEEN ?1 AND ?2 AND w.track_id = ?3");
}

Status readP2pCompletions(schema::Statement& query, std::vector<P2pCompletion>& out) {
    while (query.step()) out.push_back(rowOf(query));
    return query.error();
}

size_t applyP2pCompletions(std::vector<P2pCompletion>& rows, std::vector<P2pCall>& messages) {
    std::sort(rows.begin(), rows.end(), [](const P2pCompletion& a, const P2pCompletion& b) {
        return std::tie(a.waitEventId, a.request) < std::tie(b.waitEventId, b.request);
    });
    const size_t scanned = messages.size();
    PostIndex index(messages, scanned);
    for (const P2pCompletion& c : rows) {
        P2pCall& m = postOf(c, messages, index);
        m.blocking = false;
        m.peer = c.peer;
        if (c.hasTag) m.tag = c.tag;
        if (c.hasBytes) m.bytes = c.bytes;
        m.communicatorId = c.communicatorId;
        m.synchronous = c.synchronous;
        m.waitEventId = c.waitEventId;
        m.sendrecv = m.waitEventId == c.postEventId;
        m.waitTs = c.waitTs;
        m.waitEnd = c.waitTs + c.waitDur;
    }
    return scanned;
}

Status loadP2pCompletions(const Trace& trace, std::vector<P2pCall>& messages) {
    if (!schema::hasTable(detail::db(trace), schema::table::kMpiCompletion)) return {}; // older trace
    schema::Statement st(detail::db(trace), kSelect);
    if (!st.valid()) return st.error();
    std::vector<P2pCompletion> rows;
    HPCPROF_RETURN_IF_ERROR(readP2pCompletions(st, rows));
    applyP2pCompletions(rows, messages);
    return {};
}

} // namespace hpcprof::analyzer
