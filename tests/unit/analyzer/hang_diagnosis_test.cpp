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
