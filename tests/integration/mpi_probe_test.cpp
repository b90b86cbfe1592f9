// SPDX-License-Identifier: MIT
// Time in loops of unsuccessful MPI_Iprobe polls is waiting, not transfer: workers probe for
// work while rank 0 prepares it (tests/integration/programs/mpi_probe_wait.c). The report's
// polling wait equals the time the workers measured in their probe loops, POP does not call the
// run transfer-bound, and the findings blame rank 0's work, not communication to overlap.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"
#include "report_json.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

constexpr int kRanks = 3, kRounds = 10; // the program's ROUNDS

} // namespace

TEST_CASE("loops of unsuccessful MPI_Iprobe polls count as waiting, not transfer", "[integration][mpi]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    const std::string path = dir / "trace.hpcprof";
    auto run = runSampleUnderMpirun(path, kRanks, "mpi_probe_wait");
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    const auto measured = parseRankLines(run.out);
    REQUIRE(measured.size() == size_t(kRanks));
    // The loops were folded: far fewer probe events than probes, and some with count > 1.
    TraceQuery q(path);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'MPI_Iprobe' AND count > 1") >= kRounds);

    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    const auto doc = nlohmann::json::parse(rep.out);
    INFO(doc["wait_states"].dump() << "\n" << doc["pop"].dump());
    double probeS = 0;
    for (const auto& [rank, m] : measured) {
        CHECK(m.calls == (rank == 0 ? (kRanks - 1) * kRounds : kRounds));
        probeS += m.probeS();
    }
    // The folded loops are the measured loops less their last (successful) probe.
    const double polling = doc["wait_states"]["polling_ns"].get<double>() * 1e-9;
    CHECK(std::abs(polling - probeS) <= 0.10 * probeS);
    for (const auto& r : doc["ranks"]) {
        const int64_t rank = r["rank"];
        if (rank == 0) continue;
        INFO("rank " << rank);
        CHECK(r["wait_ns"].get<double>() * 1e-9 >= 0.9 * measured.at(rank).probeS());
    }
    // Waiting for rank 0 is not an ideal-network problem: transfer efficiency stays high, and
    // exposed-communication, if it fires, gets little of the probing.
    CHECK(doc["pop"]["transfer_efficiency"].get<double>() > 0.8);
    if (const nlohmann::json* comm = findingIn(doc, "exposed-communication"))
        CHECK((*comm)["exclusive_gain_ns"].get<double>() * 1e-9 < 0.2 * measured.at(1).probeS());
}
