// SPDX-License-Identifier: MIT
// NCCL API capture with the test-only stand-in libnccl: three rank processes run a fixed sequence
// of collectives, point-to-point calls in a group, a split and teardown. The trace must hold
// every call with its communicator, rank, size and bytes, and instance k must match across ranks.
#include <catch2/catch.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

std::string arg(const std::string& key) {
    return "(SELECT value FROM event_arg a WHERE a.event_id = e.event_id AND a.key = '" + key + "')";
}

} // namespace

TEST_CASE("every NCCL call of three ranks is recorded with communicator, rank, size and bytes",
          "[integration][gpu][nccl]") {
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-q", "--sources", "nccl", "-o",
                         dir / "trace.hpcprof", "--", sampleBinary("nccl_ranks"), "3"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0); // the stand-in computed correct results through the hooks
    TraceQuery q(dir / "trace.hpcprof");

    CHECK(q.rows("SELECT rank FROM process WHERE rank IS NOT NULL ORDER BY rank") ==
          std::vector<std::string>{"0", "1", "2"});
    // Three communicators: the world (3 members) and the two halves of the split (2 and 1).
    CHECK(q.rows("SELECT size FROM communicator WHERE kind = 'nccl' ORDER BY size") ==
          std::vector<std::string>{"1", "2", "3"});
    std::string world = "(SELECT key FROM communicator WHERE kind = 'nccl' AND size = 3)";

    // Per rank: every call, in order, with its bytes.
    for (int rank = 0; rank < 3; ++rank) {
        INFO("rank " << rank);
        auto calls = q.rows("SELECT e.name, COALESCE(e.bytes, ''), COALESCE(e.peer, '')"
                            " FROM event_view e WHERE e.category LIKE 'nccl%' AND e.rank = " +
                            std::to_string(rank) + " ORDER BY e.ts_ns");
        std::string right = std::to_string((rank + 1) % 3), left = std::to_string((rank + 2) % 3);
        std::vector<std::string> expected = {
            "ncclCommInitRank||",         "ncclAllReduce|4096|",
            "ncclBroadcast|1024|0",       "ncclAllGather|512|",
            "ncclReduceScatter|768|",     "ncclReduce|400|1",
            "ncclAlltoAll|768|",          "ncclGroupStart||",
            "ncclSend|128|" + right,      "ncclRecv|128|" + left,
            "ncclGroupEnd||",             "ncclAllReduce|4096|",
            "ncclCommSplit||",            "ncclAllReduce|32|",
            "ncclCommDestroy||",          "ncclCommDestroy||",
        };
        // Communicator creation rows carry no bytes, but rank and size arguments.
        CHECK(calls == expected);
        CHECK(q.rows("SELECT " + arg("comm_rank") + ", " + arg("nranks") +
                     " FROM event_view e WHERE e.name = 'ncclCommInitRank' AND e.rank = " +
                     std::to_string(rank)) ==
              std::vector<std::string>{std::to_string(rank) + "|3"});
    }

    // Instance k of the world communicator is the same collective on every rank.
    auto instances = q.rows("SELECT e.seq, GROUP_CONCAT(DISTINCT e.name), COUNT(DISTINCT e.rank),"
                            " GROUP_CONCAT(DISTINCT e.bytes) FROM event_view e"
                            " WHERE e.communicator = " + world +
                            " AND e.seq IS NOT NULL GROUP BY e.seq ORDER BY e.seq");
    CHECK(instances == std::vector<std::string>{
                           "0|ncclAllReduce|3|4096", "1|ncclBroadcast|3|1024",
                           "2|ncclAllGather|3|512", "3|ncclReduceScatter|3|768",
                           "4|ncclReduce|3|400", "5|ncclAlltoAll|3|768", "6|ncclAllReduce|3|4096"});
    // Sub-communicators count their own instances from 0.
    CHECK(q.rows("SELECT c.size, e.seq, COUNT(*) FROM event_view e JOIN communicator c"
                 " ON c.key = e.communicator WHERE e.name = 'ncclAllReduce' AND c.size < 3"
                 " GROUP BY c.size, e.seq ORDER BY c.size") ==
          std::vector<std::string>{"1|0|1", "2|0|2"});

    // Arguments: datatype, op, count, and the group that ties p2p calls to their ncclGroupEnd.
    CHECK(q.rows("SELECT " + arg("datatype") + ", " + arg("op") + ", " + arg("count") +
                 " FROM event_view e WHERE e.name = 'ncclReduce' AND e.rank = 1") ==
          std::vector<std::string>{"int32|max|100"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view e WHERE e.name IN ('ncclSend', 'ncclRecv',"
                   " 'ncclGroupEnd', 'ncclGroupStart') AND " + arg("group") + " IS NOT NULL") == 12);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view e WHERE e.category = 'nccl_p2p'"
                   " AND e.seq IS NOT NULL") == 0);
    // The parent that only starts the ranks is a non-rank process with no NCCL events.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE rank IS NULL AND category LIKE 'nccl%'") == 0);
}

TEST_CASE("NCCL reached only through a library loaded with RTLD_LOCAL is still captured",
          "[integration][gpu][nccl]") {
    TempDir dir;
    std::string user = sampleBinary("libnccl_local_user.so");
    auto r = runProcess({hpcprofBinary(), "run", "-q", "--sources", "nccl", "-o",
                         dir / "trace.hpcprof", "--", sampleBinary("nccl_local"), user});
    INFO(r.err);
    REQUIRE(r.exitCode == 0); // the hooks found the real functions and passed the result back
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.rows("SELECT name, COALESCE(bytes, ''), COALESCE(seq, '') FROM event_view"
                 " WHERE category LIKE 'nccl%' ORDER BY ts_ns") ==
          std::vector<std::string>{"ncclCommInitRank||", "ncclAllReduce|4|0",
                                   "ncclCommDestroy||"});
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'hooks_unresolved'") == 0);
}

TEST_CASE("CPU counters are sampled at the entry and exit of every NCCL call by default",
          "[integration][gpu][nccl]") {
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-q", "--sources", "nccl,counters", "--counters",
                         "task_clock", "-o", dir / "trace.hpcprof", "--", sampleBinary("nccl_ranks"), "3"},
                        {"HPCPROF_COUNTER_PERIOD_MS=0", // boundaries, start and exit only
                         "HPCPROF_COUNTER_MIN_GAP_US=0"}); // every boundary, however close
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    // Per rank: 12 timed NCCL calls (8 collectives, send, recv, group start and end; communicator
    // creation and destruction are not sampled), two samples each, plus the start and exit samples.
    CHECK(q.rows("SELECT rank, COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid"
                 " AND rank IS NOT NULL GROUP BY rank ORDER BY rank") ==
          std::vector<std::string>{"0|26", "1|26", "2|26"});
}
