// SPDX-License-Identifier: MIT
// Reads the trace's MPI request completions (mpi_completion) into the point-to-point calls that
// the wait-state analysis matches: which wait finished each non-blocking post, and the actual
// source, tag and size a receive turned out to have.
#include <unordered_map>

#include "wait_states.hpp"
#include "trace_access.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::analyzer {

Status loadP2pCompletions(const Trace& trace, std::vector<P2pCall>& messages) {
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
    std::unordered_map<int64_t, size_t> byEvent;
    for (size_t i = 0; i < messages.size(); ++i) byEvent.emplace(messages[i].eventId, i);
    while (st.step()) {
        const int64_t postId = st.int64(0);
        const std::string name = st.text(11);
        // MPI_I... posts one request per call (the per-rank scan may already have it);
        // MPI_Startall posts several, so every completion of a start is a message of its own.
        const bool onePerCall = name.rfind("MPI_I", 0) == 0;
        auto it = onePerCall ? byEvent.find(postId) : byEvent.end();
        if (it == byEvent.end()) {
            P2pCall m;
            m.eventId = postId;
            m.rank = st.int64(12);
            m.send = st.text(1) == "send";
            m.ts = st.int64(8);
            m.end = m.ts + st.int64(9);
            messages.push_back(m);
            it = byEvent.insert_or_assign(postId, messages.size() - 1).first;
        }
        P2pCall& m = messages[it->second];
        m.blocking = false;
        m.peer = st.int64(2);
        if (!st.isNull(3)) m.tag = st.int64(3);
        if (!st.isNull(4)) m.bytes = st.int64(4);
        m.communicatorId = st.isNull(10) ? -1 : st.int64(10);
        m.synchronous = name == "MPI_Issend";
        m.waitEventId = st.int64(5);
        m.sendrecv = m.waitEventId == postId;
        m.waitTs = st.int64(6);
        m.waitEnd = m.waitTs + st.int64(7);
    }
    return st.error();
}

} // namespace hpcprof::analyzer
