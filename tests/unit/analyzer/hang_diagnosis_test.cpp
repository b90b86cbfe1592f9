// SPDX-License-Identifier: MIT
// The hang diagnosis on hand-made rank states (families/hang/hang_diagnosis.cpp): a
// point-to-point deadlock cycle, a chain ending in I/O, a collective some members never entered
// and a sub-communicator whose members come from its events.
#include <catch2/catch.hpp>

#include "families/hang/hang_section.hpp"

using namespace hpcprof::analyzer;

namespace {

HangCall recvFrom(int64_t rank, int64_t peer) {
    HangCall c;
    c.rank = rank;
    c.name = "MPI_Recv";
    c.cls = "communication";
    c.communicator = "world";
    c.peer = peer;
    c.waitedNs = 1000;
    return c;
}

HangCall collective(int64_t rank, const std::string& name, const std::string& comm, int64_t instance) {
    HangCall c;
    c.rank = rank;
    c.name = name;
    c.cls = "communication";
    c.communicator = comm;
    c.instance = instance;
    return c;
}

HangRank rankWith(int64_t rank, std::vector<HangCall> calls) {
    HangRank r;
    r.rank = rank;
    r.calls = std::move(calls);
    r.lastCall = "MPI_Send";
    return r;
}

std::vector<int64_t> world(const std::string&) { return {0, 1, 2, 3}; }

} // namespace

TEST_CASE("hang diagnosis: receives that wait for each other form a cycle", "[unit][analyzer][hang]") {
    HangSection s;
    s.ranks = {rankWith(0, {recvFrom(0, 1)}), rankWith(1, {recvFrom(1, 2)}), rankWith(2, {recvFrom(2, 0)}),
               rankWith(3, {})};
    diagnoseHang(s, world);
    REQUIRE(s.chains.size() == 1);
    CHECK(s.chains[0].ranks == std::vector<int64_t>{0, 1, 2});
    CHECK(s.chains[0].cycle);
    CHECK(s.culprits == std::vector<int64_t>{0, 1, 2});
    CHECK(s.firstCheck.find("cycle") != std::string::npos);
}

TEST_CASE("hang diagnosis: a chain ends at the rank in I/O, two heads share its tail",
          "[unit][analyzer][hang]") {
    HangCall read;
    read.rank = 2;
    read.name = "read";
    read.cls = "io";
    read.object = "/data/in";
    read.requestedBytes = 4096;
    HangSection s;
    s.ranks = {rankWith(0, {recvFrom(0, 1)}), rankWith(1, {recvFrom(1, 2)}), rankWith(2, {read}),
               rankWith(3, {recvFrom(3, 1)})};
    diagnoseHang(s, world);
    REQUIRE(s.chains.size() == 2);
    CHECK(s.chains[0].ranks == std::vector<int64_t>{0, 1, 2});
    CHECK(s.chains[1].ranks == std::vector<int64_t>{3, 1, 2});
    CHECK(s.chains[0].end == "in read of /data/in (4096 bytes requested)");
    CHECK(s.culprits == std::vector<int64_t>{2});
}

TEST_CASE("hang diagnosis: members missing from a collective, on a sub-communicator",
          "[unit][analyzer][hang]") {
    HangSection s;
    s.ranks = {rankWith(0, {collective(0, "MPI_Allreduce", "c1", 4)}), rankWith(1, {}),
               rankWith(2, {collective(2, "MPI_Allreduce", "c1", 4)}), rankWith(3, {})};
    diagnoseHang(s, [](const std::string& comm) {
        return comm == "c1" ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0, 1, 2, 3};
    });
    REQUIRE(s.collectives.size() == 1);
    CHECK(s.collectives[0].ranks == std::vector<int64_t>{0, 2});
    CHECK(s.collectives[0].missing == std::vector<int64_t>{1}); // rank 3 is no member
    CHECK(s.mismatches.empty());
    CHECK(s.culprits == std::vector<int64_t>{1});
    CHECK(s.firstCheck == "ranks 0,2 wait in MPI_Allreduce #4 on c1; rank 1 never entered it: it "
                          "is computing (inside no recorded call since its MPI_Send returned)");
}

namespace {

/// A host call that waits for the GPU, as the CUPTI callbacks publish it.
HangCall hostSync(int64_t rank) {
    HangCall c;
    c.rank = rank;
    c.name = "cudaStreamSynchronize";
    c.cls = "annotation";
    c.waitedNs = 5000;
    return c;
}

NcclRankState enqueued(int64_t rank, const std::string& call, int64_t instance, const std::string& completion) {
    return NcclRankState{rank, instance, call, completion, {}};
}

} // namespace

TEST_CASE("hang diagnosis: NCCL ranks wait in cudaStreamSynchronize for instance 17, which rank 3 "
          "never enqueued",
          "[unit][analyzer][hang][nccl]") {
    HangSection s;
    s.ranks = {rankWith(0, {hostSync(0)}), rankWith(1, {hostSync(1)}), rankWith(2, {hostSync(2)}),
               rankWith(3, {})};
    s.nccl = {NcclCommunicatorState{"nccl:00ab", 4,
                                    {enqueued(0, "ncclAllReduce", 17, "not_seen"),
                                     enqueued(1, "ncclAllReduce", 17, "not_seen"),
                                     enqueued(2, "ncclAllReduce", 17, "not_seen"),
                                     enqueued(3, "ncclAllReduce", 16, "host_sync_returned")},
                                    -1, {}, {}, {}}};
    diagnoseHang(s, world);
    const NcclCommunicatorState& c = s.nccl[0];
    CHECK(c.lastInstance == 17);
    CHECK(c.lastCall == "ncclAllReduce");
    CHECK(c.enqueued == std::vector<int64_t>{0, 1, 2});
    CHECK(c.behind == std::vector<int64_t>{3});
    CHECK(c.ranks[0].blockedIn == "cudaStreamSynchronize");
    CHECK(c.ranks[3].blockedIn.empty());
    CHECK(s.culprits == std::vector<int64_t>{3});
    CHECK(s.mismatches.empty());
    CHECK(s.collectives.empty()); // nobody is inside an NCCL call
    CHECK(s.firstCheck ==
          "rank 3 never enqueued ncclAllReduce #17 on nccl:00ab (its last was ncclAllReduce #16; it "
          "is computing (inside no recorded call since its MPI_Send returned)); ranks 0,1,2, which "
          "enqueued it, wait in cudaStreamSynchronize: check why rank 3 does not reach this collective");
}

TEST_CASE("hang diagnosis: NCCL ranks that enqueued different collectives as one instance, and a "
          "communicator whose every member enqueued the instance that does not complete",
          "[unit][analyzer][hang][nccl]") {
    HangSection s;
    s.ranks = {rankWith(0, {hostSync(0)}), rankWith(1, {hostSync(1)})};
    auto two = [](const std::string&) { return std::vector<int64_t>{0, 1}; };
    s.nccl = {NcclCommunicatorState{"nccl:01", 2,
                                    {enqueued(0, "ncclAllReduce", 5, "not_seen"),
                                     enqueued(1, "ncclBroadcast", 5, "not_seen")},
                                    -1, {}, {}, {}}};
    diagnoseHang(s, two);
    REQUIRE(s.mismatches.size() == 1);
    CHECK(s.mismatches[0].calls ==
          std::vector<std::pair<int64_t, std::string>>{{0, "ncclAllReduce #5 on nccl:01"},
                                                       {1, "ncclBroadcast #5 on nccl:01"}});
    CHECK(s.culprits == std::vector<int64_t>{0, 1});

    HangSection same;
    same.ranks = {rankWith(0, {hostSync(0)}), rankWith(1, {hostSync(1)})};
    same.nccl = {NcclCommunicatorState{"nccl:02", 2,
                                       {enqueued(0, "ncclAllReduce", 9, "not_seen"),
                                        enqueued(1, "ncclAllReduce", 9, "not_seen")},
                                       -1, {}, {}, {}}};
    diagnoseHang(same, two);
    CHECK(same.nccl[0].behind.empty());
    CHECK(same.culprits.empty());
    CHECK(same.firstCheck.find("every member of nccl:02 enqueued ncclAllReduce #9") == 0);
}

TEST_CASE("hang diagnosis: a thread polling a completion queue does not hide the receive another "
          "thread of its rank waits in",
          "[unit][analyzer][hang][rdma]") {
    HangCall poll;
    poll.rank = 1;
    poll.name = "ibv_poll_cq";
    poll.cls = "communication";
    poll.waitedNs = 9000; // polling since before the receive
    HangSection s;
    s.ranks = {rankWith(0, {recvFrom(0, 1)}), rankWith(1, {poll, recvFrom(1, 2)}), rankWith(2, {poll})};
    s.ranks[2].calls[0].rank = 2;
    diagnoseHang(s, world);
    CHECK(s.ranks[1].current()->name == "MPI_Recv");
    REQUIRE(s.chains.size() == 1);
    CHECK(s.chains[0].ranks == std::vector<int64_t>{0, 1, 2});
    CHECK(s.chains[0].end == "polling an RDMA completion queue (ibv_poll_cq) that gave no completion "
                             "since its first empty poll");
}
