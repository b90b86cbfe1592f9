// SPDX-License-Identifier: MIT
// Peer ranks of RDMA queue pairs: two QPs that name each other as remote are one connection, in
// one process or across processes; an ambiguous or one-sided pairing leaves the peer unknown.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "families/rdma/rdma_peers.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"

using namespace hpcprof;

namespace {

struct Db {
    std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db{nullptr, sqlite3_close};
    int64_t nextEvent = 1;
    Db() {
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open(":memory:", &raw) == SQLITE_OK);
        db.reset(raw);
        REQUIRE(schema::exec(raw, schema::ddl()).ok());
        run("INSERT INTO string(id, value) VALUES (1, 'ibv_modify_qp'), (2, 'ibv_post_send'), (3, 'SEND')");
    }
    void run(const std::string& sql) { REQUIRE(schema::exec(db.get(), sql).ok()); }
    int64_t scalar(const std::string& sql) {
        schema::Statement s(db.get(), sql);
        REQUIRE(s.step());
        return sqlite3_column_type(s.get(), 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(s.get(), 0);
    }
    /// Process `id` with `rank` (-1 = none) and its CPU track (track id = process id).
    void process(int id, int rank) {
        std::string r = rank < 0 ? "NULL" : std::to_string(rank);
        run("INSERT INTO process(id, rank, host, pid, start_ts, end_state, clock_method, clock_offset_ns,"
            " clock_drift_ppb) VALUES (" + std::to_string(id) + ", " + r + ", 'n', " + std::to_string(100 + id) +
            ", 0, 'exited', 'monotonic', 0, 0)");
        run("INSERT INTO track(id, process_id, kind, name) VALUES (" + std::to_string(id) + ", " +
            std::to_string(id) + ", 'cpu_thread', 't')");
    }
    /// An event named `nameId` on `track` with qp_num (and remote_qpn when > 0) args; its id.
    int64_t call(int track, int nameId, int qpn, int remoteQpn = 0) {
        int64_t id = nextEvent++;
        run("INSERT INTO event(id, track_id, ts, dur, category_id, name_id, depth) VALUES (" +
            std::to_string(id) + ", " + std::to_string(track) + ", " + std::to_string(id) + ", 1, 0, " +
            std::to_string(nameId) + ", 0)");
        run("INSERT INTO event_arg VALUES (" + std::to_string(id) + ", 'device', 0), (" +
            std::to_string(id) + ", 'qp_num', " + std::to_string(qpn) + ")");
        if (remoteQpn)
            run("INSERT INTO event_arg VALUES (" + std::to_string(id) + ", 'remote_qpn', " +
                std::to_string(remoteQpn) + ")");
        return id;
    }
    int64_t peerOf(int64_t eventId) { return scalar("SELECT peer FROM event WHERE id = " + std::to_string(eventId)); }
};

} // namespace

TEST_CASE("QPs that name each other across processes give their events the other's rank", "[store][rdma]") {
    Db d;
    d.process(1, 0);
    d.process(2, 1);
    d.process(3, 2);
    d.call(1, 1, 10, 20); // rank 0 QP 10 <-> rank 1 QP 20
    d.call(2, 1, 20, 10);
    int64_t send0 = d.call(1, 2, 10);
    int64_t send1 = d.call(2, 2, 20);
    d.call(3, 1, 30, 10);  // rank 2 claims QP 10 as remote, but QP 10 names 20: not its peer
    int64_t send2 = d.call(3, 2, 30);
    // The work requests of rank 0's QP 10 on their nic_queue lane.
    d.run("INSERT INTO track(id, process_id, kind, name, device, stream, first_event_id, last_event_id,"
          " event_count) VALUES (4, 1, 'nic_queue', 'dev QP 10', 0, 10, 100, 101, 2)");
    d.run("INSERT INTO event(id, track_id, ts, dur, category_id, name_id, depth) VALUES"
          " (100, 4, 1, 1, 0, 3, 0), (101, 4, 2, 1, 0, 3, 0)");
    auto pairs = store::deriveRdmaPeers(d.db.get());
    REQUIRE(pairs.ok());
    CHECK(*pairs == 2);
    CHECK(d.peerOf(send0) == 1);
    CHECK(d.peerOf(send1) == 0);
    CHECK(d.peerOf(send2) == -1);
    CHECK(d.scalar("SELECT COUNT(*) FROM event WHERE track_id = 4 AND peer = 1") == 2);
    // The temporary tables are gone.
    CHECK(d.scalar("SELECT COUNT(*) FROM temp.sqlite_master") == 0);
}

TEST_CASE("an ambiguous pairing or a peer without a rank leaves the peer unknown", "[store][rdma]") {
    Db d;
    d.process(1, 0);
    d.process(2, 1);
    d.process(3, 2);
    d.process(4, -1);
    // Two processes' QP 20 both name rank 0's QP 10 (numbers repeat across hosts): ambiguous.
    d.call(1, 1, 10, 20);
    d.call(2, 1, 20, 10);
    d.call(3, 1, 20, 10);
    int64_t send0 = d.call(1, 2, 10);
    // A connection to a process without a rank.
    d.call(1, 1, 11, 40);
    d.call(4, 1, 40, 11);
    int64_t send11 = d.call(1, 2, 11);
    auto pairs = store::deriveRdmaPeers(d.db.get());
    REQUIRE(pairs.ok());
    CHECK(d.peerOf(send0) == -1);
    CHECK(d.peerOf(send11) == -1);
    // Ranks 1 and 2 each see exactly one partner for their QP 20 (rank 0), and so does the
    // rankless process's QP 40: three QPs got a peer.
    CHECK(*pairs == 3);
    CHECK(d.scalar("SELECT COUNT(*) FROM event e JOIN track t ON t.id = e.track_id WHERE t.process_id IN (2, 3, 4)"
                   " AND e.peer = 0") == 3);
}

TEST_CASE("a trace without RDMA is left untouched", "[store][rdma]") {
    Db d;
    d.run("DELETE FROM string WHERE value = 'ibv_modify_qp'");
    auto pairs = store::deriveRdmaPeers(d.db.get());
    REQUIRE(pairs.ok());
    CHECK(*pairs == 0);
}
