// SPDX-License-Identifier: MIT
// Every communicator constructor under a real Open MPI run (4 ranks): samples/mpi/mpi_comms.c
// (C) and mpi_comms_f08.f90 (the Fortran bindings) make Cartesian sub-grids, graph and
// distributed-graph topologies, a non-blocking duplicate, an intercommunicator, its merge and its
// duplicate, and run collectives and messages on each. The trace names every communicator by a
// key every member agrees on, with its size; the report matches every collective instance and
// every message. A communicator made past hpcprof's wrappers is listed in data quality by name
// and count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;
using Rows = std::vector<std::string>;

namespace {


/// Runs `program` (with `args`) on 4 ranks under hpcprof run; the trace is dir/trace.hpcprof.
void profile(const TempDir& dir, const std::string& program, const std::string& expectedOut,
             const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--",
                                     "mpirun", "-np", "4", sampleBinary(program)};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = runProcess(argv, kMpiTestEnv);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == expectedOut);
}

nlohmann::json report(const TempDir& dir) {
    auto rep = runProcess({hpcprofBinary(), "report", dir / "trace.hpcprof", "--format", "json"});
    INFO(rep.err);
    REQUIRE(rep.exitCode == 0);
    return nlohmann::json::parse(rep.out);
}

/// "key|size" of every communicator of the trace.
Rows communicators(const TraceQuery& q) {
    return q.rows("SELECT key, size FROM communicator ORDER BY key");
}

/// "communicator|function|calls" of every collective, all ranks together.
Rows collectivesByCommunicator(const TraceQuery& q) {
    return q.rows("SELECT communicator, name, COUNT(*) FROM event_view WHERE category ="
                  " 'mpi_collective' GROUP BY communicator, name ORDER BY communicator, name");
}

/// Instance k of a collective on a communicator: the same function on every member, and as many
/// members as the communicator has (both groups of an intercommunicator).
void checkEveryCollectiveMatches(const TraceQuery& q) {
    CHECK(q.scalar("SELECT COUNT(*) FROM (SELECT communicator, seq, COUNT(DISTINCT name) AS names,"
                   " COUNT(DISTINCT rank) AS ranks, MAX(c.size) AS size FROM event_view e"
                   " JOIN communicator c ON c.key = e.communicator"
                   " WHERE e.category = 'mpi_collective' GROUP BY communicator, seq)"
                   " WHERE names != 1 OR ranks != size") == 0);
}

/// The data-quality entries whose name starts with `prefix`, as "name|count".
Rows dataQuality(const nlohmann::json& doc, const std::string& prefix) {
    Rows out;
    for (const auto& d : doc["data_quality"]) {
        std::string name = d["name"];
        if (name.rfind(prefix, 0) == 0) out.push_back(name + "|" + std::to_string(int64_t(d["count"])));
    }
    std::sort(out.begin(), out.end());
    return out;
}

void checkNothingUnmatched(const nlohmann::json& doc) {
    for (const char* name : {"incomplete_collectives", "unmatched_messages", "unknown_communicator"})
        CHECK(dataQuality(doc, name).empty());
}

const Rows kCKeys = {"inter(0,2|1,3).0|4", "inter(0,2|1,3).0.0@0|4", "inter(0,2|1,3).0.1@0|4",
                     "world|4",            "world.0@0|4",            "world.0@0.0@0|2",
                     "world.0@0.0@2|2",    "world.0@0.1@0|2",        "world.0@0.1@1|2",
                     "world.1@0|4",        "world.2@0|4",            "world.3@0|4",
                     "world.4@0|4",        "world.5@0|2",            "world.5@1|2"};

} // namespace

TEST_CASE("collectives and messages on communicators from every constructor match across ranks",
          "[integration][mpi]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    profile(dir, "mpi_comms", "mpi_comms done\n");
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(communicators(q) == kCKeys);
    CHECK(collectivesByCommunicator(q) ==
          Rows{"inter(0,2|1,3).0|MPI_Allreduce|8",    "inter(0,2|1,3).0|MPI_Barrier|4",
               "inter(0,2|1,3).0|MPI_Bcast|4",        "inter(0,2|1,3).0.0@0|MPI_Allreduce|12",
               "inter(0,2|1,3).0.1@0|MPI_Barrier|4",  "world|MPI_Reduce|4",
               "world.0@0.0@0|MPI_Allreduce|6",       "world.0@0.0@0|MPI_Bcast|4",
               "world.0@0.0@2|MPI_Allreduce|6",       "world.0@0.0@2|MPI_Bcast|4",
               "world.0@0.1@0|MPI_Allreduce|4",       "world.0@0.1@0|MPI_Barrier|2",
               "world.0@0.1@1|MPI_Allreduce|4",       "world.0@0.1@1|MPI_Barrier|2",
               "world.1@0|MPI_Barrier|4",             "world.2@0|MPI_Allreduce|4",
               "world.3@0|MPI_Bcast|4",               "world.4@0|MPI_Allreduce|8"});
    checkEveryCollectiveMatches(q);
    // Every constructor is recorded once per rank, under the new communicator's key.
    for (const char* fn : {"MPI_Cart_sub", "MPI_Graph_create", "MPI_Dist_graph_create",
                           "MPI_Dist_graph_create_adjacent", "MPI_Comm_idup", "MPI_Intercomm_create",
                           "MPI_Intercomm_merge"})
        CHECK(q.scalar(std::string("SELECT COUNT(DISTINCT rank) FROM event_view WHERE name = '") + fn +
                       "' AND category = 'mpi_setup'") == 4);
    CHECK(q.rows("SELECT rank, communicator FROM event_view WHERE name = 'MPI_Intercomm_create'"
                 " ORDER BY rank") == Rows{"0|inter(0,2|1,3).0", "1|inter(0,2|1,3).0",
                                           "2|inter(0,2|1,3).0", "3|inter(0,2|1,3).0"});
    // Intercommunicator ranks name the other group: the bcast's root is world rank 0 for the
    // odd group and for the root itself (MPI_ROOT); rank 2 (MPI_PROC_NULL) has none.
    CHECK(q.rows("SELECT rank, IFNULL(peer, 'none') FROM event_view WHERE name = 'MPI_Bcast'"
                 " AND communicator = 'inter(0,2|1,3).0' ORDER BY rank") ==
          Rows{"0|0", "1|0", "2|none", "3|0"});
    CHECK(q.rows("SELECT rank, name, peer, bytes FROM event_view WHERE communicator ="
                 " 'inter(0,2|1,3).0' AND category = 'mpi_p2p' ORDER BY rank") ==
          Rows{"0|MPI_Send|1|128", "1|MPI_Recv|0|128", "2|MPI_Send|3|128", "3|MPI_Recv|2|128"});

    auto doc = report(dir);
    // 10 instances on the rows, 6 on the columns, 1 each on the graphs, 2 on the idup's
    // communicator, 4 + 3 + 1 on the intercommunicator, its merge and its dup, 1 on the world.
    CHECK(doc["wait_states"]["complete_instances"] == 30);
    CHECK(doc["wait_states"]["incomplete_instances"] == 0);
    // 4 on the rows, 4 on the columns, 4 around the graph's ring, 2 across the intercommunicator.
    CHECK(doc["wait_states"]["matched_messages"] == 14);
    CHECK(doc["wait_states"]["unmatched_messages"] == 0);
    checkNothingUnmatched(doc);
}

TEST_CASE("a communicator made past hpcprof's wrappers is reported in data quality by name and count",
          "[integration][mpi]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    profile(dir, "mpi_comms", "mpi_comms done\n", {"hidden"});
    TraceQuery q(dir / "trace.hpcprof");
    // Each rank keys it after itself; nothing names a memory address.
    CHECK(q.rows("SELECT key, size FROM communicator WHERE key LIKE 'unknown@%' ORDER BY key") ==
          Rows{"unknown@0.0|4", "unknown@1.0|4", "unknown@2.0|4", "unknown@3.0|4"});
    auto doc = report(dir);
    // 2 allreduces on every rank; rank 0 sends one message to rank 1.
    CHECK(dataQuality(doc, "unknown_communicator") ==
          Rows{"unknown_communicator:unknown@0.0|3", "unknown_communicator:unknown@1.0|3",
               "unknown_communicator:unknown@2.0|2", "unknown_communicator:unknown@3.0|2"});
    CHECK(dataQuality(doc, "incomplete_collectives") == Rows{"incomplete_collectives|8"});
    CHECK(doc["wait_states"]["complete_instances"] == 30);
    // The message on it is still matched (by ranks and tag), not left out of the waits.
    CHECK(doc["wait_states"]["matched_messages"] == 15);
    CHECK(doc["wait_states"]["unmatched_messages"] == 0);
}

TEST_CASE("the Fortran bindings of every communicator constructor are recorded and matched",
          "[integration][mpi]") {
    if (!haveMpirun() || !fs::exists(sampleBinary("mpi_comms_f08"))) {
        WARN("SKIPPED: mpirun or the Fortran sample is missing");
        return;
    }
    TempDir dir;
    profile(dir, "mpi_comms_f08", "mpi_comms_f08 done\n");
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(communicators(q) ==
          Rows{"inter(0,2|1,3).0|4", "inter(0,2|1,3).0.0@0|4", "world|4", "world.0@0|4",
               "world.0@0.0@0|2", "world.0@0.0@2|2", "world.1@0|4", "world.2@0|4", "world.3@0|4",
               "world.4@0|4", "world.5@0|2", "world.5@1|2"});
    CHECK(collectivesByCommunicator(q) ==
          Rows{"inter(0,2|1,3).0|MPI_Allreduce|4", "inter(0,2|1,3).0.0@0|MPI_Allreduce|4",
               "world.0@0.0@0|MPI_Allreduce|2", "world.0@0.0@2|MPI_Allreduce|2",
               "world.1@0|MPI_Barrier|4", "world.2@0|MPI_Allreduce|4", "world.3@0|MPI_Bcast|4",
               "world.4@0|MPI_Allreduce|4"});
    checkEveryCollectiveMatches(q);
    CHECK(q.rows("SELECT name, COUNT(*) FROM event_view WHERE category = 'mpi_setup' AND name"
                 " NOT IN ('MPI_Init', 'MPI_Finalize') GROUP BY name ORDER BY name") ==
          Rows{"MPI_Cart_create|4", "MPI_Cart_sub|4", "MPI_Comm_free|36", "MPI_Comm_idup|4",
               "MPI_Comm_split|4", "MPI_Dist_graph_create|4", "MPI_Dist_graph_create_adjacent|4",
               "MPI_Graph_create|4", "MPI_Intercomm_create|4", "MPI_Intercomm_merge|4"});
    auto doc = report(dir);
    CHECK(doc["wait_states"]["complete_instances"] == 8);
    CHECK(doc["wait_states"]["incomplete_instances"] == 0);
    CHECK(doc["wait_states"]["matched_messages"] == 4); // 2 on the rows, 2 across the groups
    CHECK(doc["wait_states"]["unmatched_messages"] == 0);
    checkNothingUnmatched(doc);
}
