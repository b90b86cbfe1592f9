// SPDX-License-Identifier: MIT
// A real third-party MPI application from Debian under hpcprof: MUMPS's example solver
// (package mumps-test, `dsimpletest`, the matrix read from stdin) on 4 ranks. Its output must be
// byte-identical to an unprofiled run apart from the lines that report its own timings, and the
// trace must hold every rank's MPI calls with the collectives matched across ranks.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

const char* kSolver = "/usr/lib/mumps/dsimpletest";
const char* kInput = "/usr/lib/mumps/input_simpletest_real";


/// The output without the lines in which MUMPS reports how long its phases took.
std::string withoutTimings(const std::string& text) {
    std::istringstream in(text);
    std::string line, kept;
    while (std::getline(in, line))
        if (line.find("time") == std::string::npos && line.find("Time") == std::string::npos)
            kept += line + "\n";
    return kept;
}

} // namespace

TEST_CASE("MUMPS from Debian runs unchanged on 4 ranks and every rank's MPI calls are recorded",
          "[integration][mpi]") {
    if (access(kSolver, X_OK) != 0 || runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0) {
        WARN("SKIPPED: mpirun or Debian's mumps-test missing");
        return;
    }
    const std::string input = readWholeFile(kInput);
    const std::vector<std::string> cmd = {"mpirun", "-np", "4", kSolver};
    auto plain = runProcess(cmd, kMpiTestEnv, input);
    REQUIRE(plain.exitCode == 0);
    // The known answer of the bundled 5 x 5 system, so a broken solve cannot pass as "identical".
    REQUIRE(plain.out.find("Solution is   0.999999") != std::string::npos);

    TempDir dir;
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--"};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    auto r = runProcess(argv, kMpiTestEnv, input);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(withoutTimings(r.out) == withoutTimings(plain.out));
    CHECK(withoutTimings(r.out).size() > 3000); // the whole report, not an empty pair

    TraceQuery q(dir / "t.hpcprof");
    CHECK(q.scalar("SELECT COUNT(DISTINCT rank) FROM process WHERE rank IS NOT NULL AND rank_source = 'MPI'") == 4);
    for (int rank = 0; rank < 4; ++rank) {
        INFO("rank " << rank);
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE rank = " + std::to_string(rank) +
                       " AND name IN ('MPI_Init', 'MPI_Init_thread')") == 1);
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE rank = " + std::to_string(rank) +
                       " AND name = 'MPI_Finalize'") == 1);
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE rank = " + std::to_string(rank) +
                       " AND category = 'mpi_collective'") > 10);
    }
    // Every instance of every collective has exactly its communicator's members, calling the
    // same function, and every rank made the same number of collective calls on the duplicate of
    // MPI_COMM_WORLD that MUMPS works on.
    CHECK(q.scalar("SELECT COUNT(*) FROM (SELECT communicator, seq, COUNT(DISTINCT name) AS names,"
                   " COUNT(DISTINCT rank) AS ranks, MAX(c.size) AS size FROM event_view e"
                   " JOIN communicator c ON c.key = e.communicator"
                   " WHERE e.category = 'mpi_collective' GROUP BY communicator, seq)"
                   " WHERE names != 1 OR ranks != size") == 0);
    CHECK(q.scalar("SELECT COUNT(DISTINCT n) FROM (SELECT rank, COUNT(*) AS n FROM event_view"
                   " WHERE category = 'mpi_collective' AND communicator = 'world.0@0' GROUP BY rank)") == 1);
    CHECK(q.scalar("SELECT COUNT(DISTINCT rank) FROM event_view WHERE communicator = 'world.0@0'") == 4);
    // Point-to-point traffic between ranks: every message sent was received.
    int64_t sends = q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('MPI_Send', 'MPI_Isend', 'MPI_Ssend', 'MPI_Bsend')");
    CHECK(sends > 10);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('MPI_Recv', 'MPI_Irecv')") == sends);
    CHECK(q.scalar("SELECT COUNT(*) FROM stats WHERE name IN ('records_dropped', 'records_torn', 'processes_ended_abnormally') AND value > 0") == 0);
}
