// SPDX-License-Identifier: MIT
// Wait states of non-blocking point-to-point calls: hand-built traces with mpi_completion rows
// whose late-sender / late-receiver waits were computed by hand (the arithmetic is in the
// comments). The blocking calls are added as the per-rank scan of analyze.cpp adds them.
#include <catch2/catch.hpp>

#include "analyzer/src/wait_states.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

// The test's own read-only connection: the analyzer keeps its Trace's connection private.
int64_t queryInt(const Trace& t, const std::string& sql) {
    auto db = schema::openTraceReadOnly(t.path());
    REQUIRE(db.ok());
    schema::Statement st(db->get(), sql);
    REQUIRE(st.valid());
    REQUIRE(st.step());
    return st.int64(0);
}

const RankWait& rankWait(const WaitStates& w, int64_t rank) {
    for (const auto& r : w.perRank)
        if (r.rank == rank) return r;
    FAIL("no rank " << rank);
    return w.perRank.front();
}

WaitStates computeP2p(std::vector<P2pCall> messages, int64_t ranks) {
    std::vector<int64_t> ids;
    for (int64_t r = 0; r < ranks; ++r) ids.push_back(r);
    return computeWaitStates({}, std::move(messages), ids, [](int64_t) { return std::nullopt; });
}

} // namespace

// Four ranks on communicator "world":
//   rank 0: Irecv(1, tag 5) @10, Irecv(2, tag 5) @11, Isend(1, tag 6, 8 B) @12,
//           Waitall [20, 100) completing all three
//   rank 1: Isend(0, tag 5) @50, Irecv(0, tag 6) @52, Waitall [55, 60); MPI_Send(3, tag 7) [40, 43)
//   rank 2: Isend(0, tag 5) @90, Wait [93, 94); Issend(3, tag 9) @100, Wait [105, 150)
//   rank 3: Irecv(ANY_SOURCE, tag 7) @10, Wait [15, 55) -> source 1; Irecv(2, tag 9) @130,
//           Wait [131, 133)
// Rank 0's Waitall: recv from 1 would wait min(50,100)-20 = 30, recv from 2 min(90,100)-20 = 70,
//   the 8-byte standard send is eager (no wait): the call waits 70 once, blamed on rank 2.
// Rank 3's wildcard receive (matched to rank 1's MPI_Send by its actual source): min(40,55)-15 = 25,
//   late sender blamed on rank 1.
// Rank 2's Issend completes only once rank 3 posts its receive at 130: min(130,150)-105 = 25,
//   late receiver blamed on rank 3. Rank 1's Waitall: its send to 0 (tag 6) was posted at 12,
//   before the wait: no wait.
TEST_CASE("non-blocking sends and receives completed by waits get exact late-sender and late-receiver waits",
          "[analyzer][wait_states]") {
    test::TempDir dir;
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 200, 4), r1 = b.rank(1, 0, 200, 4), r2 = b.rank(2, 0, 200, 4),
        r3 = b.rank(3, 0, 200, 4);
    auto p2p = [&](int track, const char* name, int64_t ts, int64_t dur) -> test::EventSpec& {
        return b.event(track, Category::MpiP2p, name, ts, dur).withCommunicator("world", 4);
    };
    p2p(r0, "MPI_Irecv", 10, 1).withPeer(1).withTag(5).withLabel("r0a");
    p2p(r0, "MPI_Irecv", 11, 1).withPeer(2).withTag(5).withLabel("r0b");
    p2p(r0, "MPI_Isend", 12, 1).withPeer(1).withTag(6).withBytes(8).withLabel("s0");
    b.event(r0, Category::MpiWait, "MPI_Waitall", 20, 80)
        .completes("r0a", true, 1, 5, 8)
        .completes("r0b", true, 2, 5, 8)
        .completes("s0", false, 1, 6, 8);
    p2p(r1, "MPI_Send", 40, 3).withPeer(3).withTag(7).withBytes(16);
    p2p(r1, "MPI_Isend", 50, 2).withPeer(0).withTag(5).withBytes(8).withLabel("s1");
    p2p(r1, "MPI_Irecv", 52, 1).withPeer(0).withTag(6).withLabel("r1");
    b.event(r1, Category::MpiWait, "MPI_Waitall", 55, 5).completes("s1", false, 0, 5, 8).completes("r1", true, 0, 6, 8);
    p2p(r2, "MPI_Isend", 90, 2).withPeer(0).withTag(5).withBytes(8).withLabel("s2");
    b.event(r2, Category::MpiWait, "MPI_Wait", 93, 1).completes("s2", false, 0, 5, 8);
    p2p(r2, "MPI_Issend", 100, 1).withPeer(3).withTag(9).withBytes(4).withLabel("s2b");
    b.event(r2, Category::MpiWait, "MPI_Wait", 105, 45).completes("s2b", false, 3, 9, 4);
    p2p(r3, "MPI_Irecv", 10, 1).withTag(7).withLabel("r3"); // ANY_SOURCE: no peer at posting
    b.event(r3, Category::MpiWait, "MPI_Wait", 15, 40).completes("r3", true, 1, 7, 16);
    p2p(r3, "MPI_Irecv", 130, 1).withPeer(2).withTag(9).withLabel("r3b");
    b.event(r3, Category::MpiWait, "MPI_Wait", 131, 2).completes("r3b", true, 2, 9, 4);
    const std::string path = dir / "nb.hpcprof";
    b.write(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());

    // The blocking send, as the per-rank scan collects it.
    P2pCall send;
    send.rank = 1;
    send.peer = 3;
    send.tag = 7;
    send.ts = 40;
    send.end = 43;
    send.bytes = 16;
    send.send = true;
    send.blocking = true;
    send.eventId = queryInt(*trace, "SELECT e.id FROM event e JOIN string s ON s.id = e.name_id"
                                    " WHERE s.value = 'MPI_Send'");
    send.communicatorId = queryInt(*trace, "SELECT id FROM communicator WHERE key = 'world'");
    std::vector<P2pCall> messages{send};
    REQUIRE(loadP2pCompletions(*trace, messages).ok());
    REQUIRE(messages.size() == 10); // the send + 9 completed posts

    WaitStates w = computeP2p(messages, 4);
    CHECK(w.matchedMessages == 5);
    CHECK(w.unmatchedMessages == 0);
    CHECK(w.lateSenderNs == 70 + 25);
    CHECK(w.lateReceiverNs == 25);
    CHECK(rankWait(w, 0).lateSenderNs == 70);
    CHECK(rankWait(w, 0).lateReceiverNs == 0);
    CHECK(rankWait(w, 1).total() == 0);
    CHECK(rankWait(w, 2).lateReceiverNs == 25);
    CHECK(rankWait(w, 2).lateSenderNs == 0);
    CHECK(rankWait(w, 3).lateSenderNs == 25);
    REQUIRE(w.stragglers.size() == 3);
    CHECK(w.stragglers[0].rank == 2);
    CHECK(w.stragglers[0].inflictedWaitNs == 70);
    CHECK(w.stragglers[0].exampleEventId ==
          queryInt(*trace, "SELECT e.id FROM event e JOIN string s ON s.id = e.name_id"
                           " WHERE s.value = 'MPI_Isend' AND e.ts = 90"));
    CHECK(w.stragglers[1].rank == 1);
    CHECK(w.stragglers[1].inflictedWaitNs == 25);
    CHECK(w.stragglers[2].rank == 3);
    CHECK(w.stragglers[2].inflictedWaitNs == 25);
}

// Rank 0: Irecv(1, tag 1) on "a" @10, Irecv(1, tag 1) on "b" @11, Wait(a) [20, 100),
//         Wait(b) [101, 111). Rank 1: Isend(0, tag 1) on "b" @30, on "a" @60.
// Per communicator: Wait(a) waits for the "a" send: min(60,100)-20 = 40; Wait(b) entered after
// the "b" send (30 < 101): 0. Matching in posting order across communicators would give 10.
TEST_CASE("non-blocking messages are matched per communicator", "[analyzer][wait_states]") {
    test::TempDir dir;
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 200, 2), r1 = b.rank(1, 0, 200, 2);
    b.event(r0, Category::MpiP2p, "MPI_Irecv", 10, 1).withPeer(1).withTag(1).withCommunicator("a", 2).withLabel("ra");
    b.event(r0, Category::MpiP2p, "MPI_Irecv", 11, 1).withPeer(1).withTag(1).withCommunicator("b", 2).withLabel("rb");
    b.event(r0, Category::MpiWait, "MPI_Wait", 20, 80).completes("ra", true, 1, 1, 4);
    b.event(r0, Category::MpiWait, "MPI_Wait", 101, 10).completes("rb", true, 1, 1, 4);
    b.event(r1, Category::MpiP2p, "MPI_Isend", 30, 1).withPeer(0).withTag(1).withBytes(4).withCommunicator("b", 2).withLabel("sb");
    b.event(r1, Category::MpiP2p, "MPI_Isend", 60, 1).withPeer(0).withTag(1).withBytes(4).withCommunicator("a", 2).withLabel("sa");
    b.event(r1, Category::MpiWait, "MPI_Waitall", 70, 1).completes("sb", false, 0, 1, 4).completes("sa", false, 0, 1, 4);
    const std::string path = dir / "comm.hpcprof";
    b.write(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    std::vector<P2pCall> messages;
    REQUIRE(loadP2pCompletions(*trace, messages).ok());
    REQUIRE(messages.size() == 4);
    WaitStates w = computeP2p(messages, 2);
    CHECK(w.matchedMessages == 2);
    CHECK(w.lateSenderNs == 40);
    CHECK(rankWait(w, 0).lateSenderNs == 40);
    REQUIRE(w.stragglers.size() == 1);
    CHECK(w.stragglers[0].rank == 1);
}

TEST_CASE("a standard send of rendezvous size waits for a late receiver inside its wait", "[analyzer][wait_states]") {
    // Rank 0: Isend(1, tag 0, 64 KiB) @0, Wait [5, 50). Rank 1: Irecv(0, tag 0) @30, Wait [31, 40).
    // The send cannot complete before the receive is posted: min(30,50)-5 = 25, blamed on rank 1.
    // The same send of 64 KiB - 1 bytes is taken to be eager: no wait.
    for (int64_t bytes : {kRendezvousBytes, kRendezvousBytes - 1}) {
        test::TempDir dir;
        test::TraceBuilder b;
        int r0 = b.rank(0, 0, 100, 2), r1 = b.rank(1, 0, 100, 2);
        b.event(r0, Category::MpiP2p, "MPI_Isend", 0, 1).withPeer(1).withTag(0).withBytes(bytes).withLabel("s");
        b.event(r0, Category::MpiWait, "MPI_Wait", 5, 45).completes("s", false, 1, 0, bytes);
        b.event(r1, Category::MpiP2p, "MPI_Irecv", 30, 1).withPeer(0).withTag(0).withLabel("r");
        b.event(r1, Category::MpiWait, "MPI_Wait", 31, 9).completes("r", true, 0, 0, bytes);
        const std::string path = dir / "big.hpcprof";
        b.write(path);
        auto trace = Trace::open(path);
        REQUIRE(trace.ok());
        std::vector<P2pCall> messages;
        REQUIRE(loadP2pCompletions(*trace, messages).ok());
        WaitStates w = computeP2p(messages, 2);
        INFO(bytes);
        CHECK(w.matchedMessages == 1);
        CHECK(w.lateReceiverNs == (bytes >= kRendezvousBytes ? 25 : 0));
        CHECK(w.lateSenderNs == 0);
    }
}

TEST_CASE("each request an MPI_Startall posted is a message of its own", "[analyzer][wait_states]") {
    // Rank 0: Startall @10 posting receives from 1 and 2 (tag 5), Waitall [20, 100).
    // Rank 1: Isend(0, tag 5) @40; rank 2: Isend(0, tag 5) @60.
    // Two messages from one posting event; the Waitall waits min(60,100)-20 = 40, blamed on 2.
    test::TempDir dir;
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 200, 3), r1 = b.rank(1, 0, 200, 3), r2 = b.rank(2, 0, 200, 3);
    b.event(r0, Category::MpiP2p, "MPI_Startall", 10, 1).withLabel("st");
    b.event(r0, Category::MpiWait, "MPI_Waitall", 20, 80).completes("st", true, 1, 5, 8).completes("st", true, 2, 5, 8);
    b.event(r1, Category::MpiP2p, "MPI_Isend", 40, 1).withPeer(0).withTag(5).withBytes(8).withLabel("s1");
    b.event(r1, Category::MpiWait, "MPI_Wait", 41, 1).completes("s1", false, 0, 5, 8);
    b.event(r2, Category::MpiP2p, "MPI_Isend", 60, 1).withPeer(0).withTag(5).withBytes(8).withLabel("s2");
    b.event(r2, Category::MpiWait, "MPI_Wait", 61, 1).completes("s2", false, 0, 5, 8);
    const std::string path = dir / "startall.hpcprof";
    b.write(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    std::vector<P2pCall> messages;
    REQUIRE(loadP2pCompletions(*trace, messages).ok());
    REQUIRE(messages.size() == 4);
    WaitStates w = computeP2p(messages, 3);
    CHECK(w.matchedMessages == 2);
    CHECK(w.unmatchedMessages == 0);
    CHECK(rankWait(w, 0).lateSenderNs == 40);
    REQUIRE(w.stragglers.size() == 1);
    CHECK(w.stragglers[0].rank == 2);
    CHECK(w.stragglers[0].inflictedWaitNs == 40);
}

namespace {

// A non-periodic shift to the right on 3 ranks (tag 1): rank r sends to r+1 and receives from
// r-1; rank 0 receives from MPI_PROC_NULL and rank 2 sends to it (those halves have no row).
//   rank 0: Sendrecv [10, 12)  send 8 B to 1
//   rank 1: Sendrecv [20, 80)  send to 2, recv from 0    (rank 0's send started at 10: no wait)
//   rank 2: Sendrecv [5, 70)   recv from 1 (an MPI_Recv partner would do the same)
// Rank 2's receive half: rank 1's send starts at 20: late sender, min(20,70)-5 = 15, blamed
// on rank 1. Rank 1's send half is 8 B (eager): no late receiver although rank 2 was ready.
// Then rank 1 sends 8 B to rank 2 in a second Sendrecv [100, 150) whose receive half has
// MPI_PROC_NULL, and rank 2 posts the matching MPI_Irecv at 130 (Wait [131, 160)): the call
// was still running when the receive was posted, so its send half waited for the late
// receiver like a blocking send (whatever its size), min(130,150)-100 = 30, blamed on rank 2.
// Last, rank 0 sends 8 B to rank 1 in a Sendrecv [170, 175) (tag 3) that rank 1 receives
// with MPI_Recv [180, 181): the call had returned when the receive was posted: no wait.
void writeSendrecvTrace(const std::string& path) {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 200, 3), r1 = b.rank(1, 0, 200, 3), r2 = b.rank(2, 0, 200, 3);
    auto sendrecv = [&](int track, int64_t ts, int64_t dur, const char* label) -> test::EventSpec& {
        return b.event(track, Category::MpiP2p, "MPI_Sendrecv", ts, dur)
            .withCommunicator("world", 3)
            .withLabel(label);
    };
    sendrecv(r0, 10, 2, "a").withPeer(1).withTag(1).withBytes(8).completes("a", false, 1, 1, 8);
    sendrecv(r1, 20, 60, "b").withPeer(2).withTag(1).withBytes(8)
        .completes("b", false, 2, 1, 8)
        .completes("b", true, 0, 1, 8);
    sendrecv(r2, 5, 65, "c").completes("c", true, 1, 1, 8);
    sendrecv(r1, 100, 50, "d").withPeer(2).withTag(2).withBytes(8).completes("d", false, 2, 2, 8);
    b.event(r2, Category::MpiP2p, "MPI_Irecv", 130, 1).withPeer(1).withTag(2)
        .withCommunicator("world", 3).withLabel("r");
    b.event(r2, Category::MpiWait, "MPI_Wait", 131, 29).completes("r", true, 1, 2, 8);
    sendrecv(r0, 170, 5, "e").withPeer(1).withTag(3).withBytes(8).completes("e", false, 1, 3, 8);
    b.event(r1, Category::MpiP2p, "MPI_Recv", 180, 1).withPeer(0).withTag(3).withBytes(8)
        .withCommunicator("world", 3);
    b.write(path);
}

} // namespace

TEST_CASE("both halves of an MPI_Sendrecv are matched and the call waits once for its late partner",
          "[analyzer][wait_states]") {
    test::TempDir dir;
    const std::string path = dir / "sendrecv.hpcprof";
    writeSendrecvTrace(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    std::vector<P2pCall> messages;
    REQUIRE(loadP2pCompletions(*trace, messages).ok());
    // The blocking receive, as the per-rank scan collects it.
    P2pCall recv;
    recv.rank = 1;
    recv.peer = 0;
    recv.tag = 3;
    recv.ts = 180;
    recv.end = 181;
    recv.bytes = 8;
    recv.blocking = true;
    recv.eventId = queryInt(*trace, "SELECT e.id FROM event e WHERE e.ts = 180");
    recv.communicatorId = queryInt(*trace, "SELECT id FROM communicator WHERE key = 'world'");
    messages.push_back(recv);
    REQUIRE(messages.size() == 8); // one per recorded half, the Irecv and the Recv
    WaitStates w = computeP2p(messages, 3);
    CHECK(w.matchedMessages == 4);
    CHECK(w.unmatchedMessages == 0); // the MPI_PROC_NULL halves are not messages
    CHECK(rankWait(w, 0).total() == 0);
    CHECK(rankWait(w, 1).lateReceiverNs == 30);
    CHECK(rankWait(w, 1).lateSenderNs == 0);
    CHECK(rankWait(w, 2).lateSenderNs == 15);
    const int64_t c = queryInt(*trace, "SELECT e.id FROM event e WHERE e.ts = 5");
    const int64_t d = queryInt(*trace, "SELECT e.id FROM event e WHERE e.ts = 100");
    CHECK(w.waitByEvent.at(c) == 15);
    CHECK(w.waitByEvent.at(d) == 30);
    REQUIRE(w.stragglers.size() == 2);
    CHECK(w.stragglers[0].rank == 2);
    CHECK(w.stragglers[0].inflictedWaitNs == 30);
    CHECK(w.stragglers[1].rank == 1);
    CHECK(w.stragglers[1].inflictedWaitNs == 15);
}
