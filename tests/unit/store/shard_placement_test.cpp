// SPDX-License-Identifier: MIT
// Where each per-node shard lands on the merged trace's time base (shards.hpp, "Clocks"), and the
// counters summaries of several shards as one.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "store/shard_metadata.hpp"
#include "store/shard_placement.hpp"

using namespace hpcprof::store;

namespace {

ShardInfo shard(const std::string& node, const std::string& host, int64_t mono, int64_t realtime,
                std::set<int64_t> ranks, std::optional<int64_t> rank0Offset = std::nullopt) {
    ShardInfo s;
    s.node = node;
    s.file = node;
    s.host = host;
    s.originMono = mono;
    s.originRealtime = realtime;
    s.ranks = std::move(ranks);
    s.rank0Offset = rank0Offset;
    return s;
}

} // namespace

TEST_CASE("shards on one host are placed by the shared monotonic clock, exactly",
          "[store][shards]") {
    // Realtime readings 40 ns off (taken a moment apart): the monotonic clock decides.
    std::vector<ShardInfo> s = {shard("node1", "h", 5'000, 1'000'000'040, {2, 3}),
                                shard("node0", "h", 2'000, 999'997'000, {0, 1})};
    Placement p = placeShards(s);
    REQUIRE(s[0].node == "node0"); // oldest first
    CHECK(s[0].shift == 0);
    CHECK(s[1].shift == 3'000);
    CHECK(s[1].clockMethod.empty());
    CHECK(p.originRealtime == 999'997'000);
    CHECK(p.clockMethod == "monotonic");
}

TEST_CASE("shards on other hosts are placed by their ranks' offset to rank 0, else by the "
          "realtime clock", "[store][shards]") {
    // node1's clock is 1 s ahead of rank 0's (measured offset); its realtime clock says 0.5 s
    // later, which the MPI measurement overrides. node2 measured nothing: realtime.
    std::vector<ShardInfo> s = {shard("node0", "a", 10'000'000'000, 100'000'000'000, {0, 1}),
                                shard("node1", "b", 11'500'000'000, 100'500'000'000, {2, 3},
                                      1'000'000'000),
                                shard("node2", "c", 77, 100'200'000'000, {4, 5})};
    Placement p = placeShards(s);
    REQUIRE(s.size() == 3);
    CHECK(s[0].node == "node0");
    CHECK(s[0].shift == 0);
    CHECK(s[1].node == "node2");
    CHECK(s[1].shift == 200'000'000);
    CHECK(s[1].clockMethod == "realtime");
    CHECK(s[2].node == "node1");
    CHECK(s[2].shift == 500'000'000); // 11.5 s - 1 s offset - 10 s
    CHECK(s[2].clockMethod == "mpi_pingpong");
    CHECK(p.clockMethod == "mpi_pingpong");
}

TEST_CASE("a shard that starts before rank 0's defines ts 0", "[store][shards]") {
    std::vector<ShardInfo> s = {shard("node0", "h", 9'000, 1'000'009'000, {0}),
                                shard("node1", "h", 1'000, 1'000'001'000, {1})};
    Placement p = placeShards(s);
    CHECK(s[0].node == "node1");
    CHECK(s[0].shift == 0);
    CHECK(s[1].shift == 8'000);
    CHECK(p.originRealtime == 1'000'001'000);
}

TEST_CASE("counters summaries of several shards add up per counter and list each host once",
          "[store][shards]") {
    std::string a = R"({"period_ns":5,"available":[{"counter":"task_clock","processes":2,"source":"perf"}],)"
                    R"("unavailable":[{"counter":"PAPI_TOT_INS","processes":2,"reason":"r1"}],)"
                    R"("hosts":[{"host":"h","online_cpus":2,"affinity_cpus":2}]})";
    std::string b = R"({"period_ns":5,"available":[{"counter":"task_clock","processes":3,"source":"perf"}],)"
                    R"("unavailable":[{"counter":"PAPI_TOT_INS","processes":1,"reason":"r2","reasons":)"
                    R"([{"reason":"r2","processes":1}]}],"hosts":[{"host":"h","online_cpus":2,"affinity_cpus":2}]})";
    auto merged = nlohmann::json::parse(mergeCountersSummaries({a, b}));
    CHECK(merged["period_ns"] == 5);
    CHECK(merged["available"][0]["processes"] == 5);
    CHECK(merged["unavailable"][0]["processes"] == 3);
    CHECK(merged["unavailable"][0]["reason"] == "r1");
    CHECK(merged["unavailable"][0]["reasons"] ==
          nlohmann::json::parse(R"([{"reason":"r1","processes":2},{"reason":"r2","processes":1}])"));
    CHECK(merged["hosts"].size() == 1);
}
