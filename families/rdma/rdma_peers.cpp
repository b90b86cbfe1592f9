// SPDX-License-Identifier: MIT
#include "rdma_peers.hpp"

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::store {

Result<int64_t> deriveRdmaPeers(sqlite3* db) {
    // Nothing to do in traces without RDMA: one lookup in the string table.
    {
        schema::Statement any(db, "SELECT 1 FROM string WHERE value = 'ibv_modify_qp' LIMIT 1");
        if (!any.valid()) return Status::error("cannot query the string table");
        if (!any.step()) return int64_t(0);
    } // (a live statement would keep the temporary tables from being dropped)

    // Each QP's remote QP number (from the transition that set it; QPs are keyed by process,
    // device and number, since numbers are per device). Both statements start from event_arg
    // (CROSS JOIN fixes the order): the event table has no index and may hold tens of millions
    // of rows, while only RDMA events carry these keys.
    HPCPROF_RETURN_IF_ERROR(schema::exec(db, R"sql(
        CREATE TEMP TABLE rdma_qp AS
        SELECT t.process_id AS process_id, COALESCE(d.value, -1) AS device, q.value AS qpn,
               MAX(r.value) AS remote_qpn
        FROM event_arg r
        CROSS JOIN event e ON e.id = r.event_id
        CROSS JOIN string s ON s.id = e.name_id
        CROSS JOIN track t ON t.id = e.track_id
        CROSS JOIN event_arg q ON q.event_id = e.id AND q.key = 'qp_num'
        LEFT JOIN event_arg d ON d.event_id = e.id AND d.key = 'device'
        WHERE r.key = 'remote_qpn' AND s.value = 'ibv_modify_qp'
        GROUP BY 1, 2, 3;
        CREATE TEMP TABLE rdma_peer AS
        SELECT a.process_id, a.device, a.qpn, MIN(p.rank) AS peer_rank
        FROM rdma_qp a
        JOIN rdma_qp b ON b.qpn = a.remote_qpn AND b.remote_qpn = a.qpn
                      AND NOT (b.process_id = a.process_id AND b.device = a.device AND b.qpn = a.qpn)
        JOIN process p ON p.id = b.process_id
        GROUP BY a.process_id, a.device, a.qpn
        HAVING COUNT(*) = 1 AND MIN(p.rank) IS NOT NULL;
    )sql"));

    // The calls that name the QP, and the work requests on its lane.
    Status s = schema::exec(db, R"sql(
        UPDATE event SET peer = m.peer_rank FROM (
            SELECT e.id AS event_id, rp.peer_rank AS peer_rank
            FROM event_arg q
            CROSS JOIN event e ON e.id = q.event_id
            CROSS JOIN track t ON t.id = e.track_id
            LEFT JOIN event_arg d ON d.event_id = e.id AND d.key = 'device'
            JOIN rdma_peer rp ON rp.process_id = t.process_id AND rp.qpn = q.value
                             AND rp.device = COALESCE(d.value, -1)
            WHERE q.key = 'qp_num'
            UNION ALL
            SELECT e.id, rp.peer_rank
            FROM track t
            JOIN rdma_peer rp ON rp.process_id = t.process_id AND rp.qpn = t.stream
                             AND rp.device = COALESCE(t.device, -1)
            JOIN event e ON e.id BETWEEN t.first_event_id AND t.last_event_id
            WHERE t.kind = 'nic_queue'
        ) AS m WHERE event.id = m.event_id;
    )sql");
    int64_t pairs = 0;
    if (s.ok()) {
        schema::Statement count(db, "SELECT COUNT(*) FROM temp.rdma_peer");
        if (count.step()) pairs = sqlite3_column_int64(count.get(), 0);
    } // finalized before the drop
    Status dropped = schema::exec(db, "DROP TABLE temp.rdma_qp; DROP TABLE temp.rdma_peer;");
    if (!s.ok()) return s;
    if (!dropped.ok()) return dropped;
    return pairs;
}

} // namespace hpcprof::store
