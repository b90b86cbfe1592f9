// SPDX-License-Identifier: MIT
// MPI start-up and shutdown are not communication (issue 19, point 1). samples/mpi/
// mpi_setup_share.c measures its own computation, communication and mid-run set-up with
// MPI_Wtime between the return of MPI_Init and the call of MPI_Finalize, and prints them; the
// report of its run under hpcprof must agree with those figures within 10 %, report set-up on
// its own, compute the POP metrics between MPI_Init and MPI_Finalize (the whole window with
// --include-setup), and give no communication advice a gain that includes set-up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kRanks = 2;

/// What one rank of mpi_setup_share printed, in ns.
struct Measured {
    int64_t computeNs = 0, commNs = 0, setupNs = 0, elapsedNs = 0;
};

std::map<int64_t, Measured> parseMeasured(const std::string& out) {
    std::map<int64_t, Measured> m;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string tag, k1, k2, k3, k4, k5;
        int64_t rank = -1;
        double compute = 0, comm = 0, setup = 0, elapsed = 0;
        if (!(l >> tag >> k1 >> rank >> k2 >> compute >> k3 >> comm >> k4 >> setup >> k5 >> elapsed) ||
            tag != "setup-share")
            continue;
        m[rank] = {std::llround(compute * 1e9), std::llround(comm * 1e9), std::llround(setup * 1e9),
                   std::llround(elapsed * 1e9)};
    }
    return m;
}

json readJson(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}

/// `hpcprof report --format json` of `trace`, with `extra` options.
json reportOf(const fs::path& trace, const fs::path& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {hpcprofBinary(), "report", "--format", "json", "-o", out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(trace.string());
    auto r = runProcess(argv);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    return readJson(out);
}

bool within(double value, double expected, double tolerance) {
    return std::fabs(value - expected) <= tolerance * std::fabs(expected);
}

/// The rank's own figures against the report's: communication within 10 %, the region between
/// MPI_Init and MPI_Finalize as long as what the program measured, its communication share
/// within 10 % of the program's, set-up on its own (at least the mid-run calls it timed).
void checkRank(const json& r, const Measured& m) {
    const int64_t comm = r["comm_ns"], setup = r["setup_ns"];
    const json& region = r["region"];
    const double regionShare = double(region["comm_ns"].get<int64_t>()) / double(region["window_ns"].get<int64_t>());
    const double programShare = double(m.commNs) / double(m.elapsedNs);
    INFO("rank " << r["rank"] << ": report comm " << comm << " ns, setup " << setup << " ns, region "
                 << region.dump() << "; program compute " << m.computeNs << " comm " << m.commNs
                 << " setup " << m.setupNs << " elapsed " << m.elapsedNs);
    CHECK(within(double(comm), double(m.commNs), 0.10));
    CHECK(within(double(region["window_ns"].get<int64_t>()), double(m.elapsedNs), 0.10));
    CHECK(within(regionShare, programShare, 0.10));
    CHECK(within(double(region["compute_ns"].get<int64_t>()), double(m.computeNs), 0.10));
    CHECK(setup > 0);
    CHECK(setup >= m.setupNs * 9 / 10); // init and finalize come on top of the mid-run calls
    CHECK(r["setup_total_ns"].get<int64_t>() >= setup);
}

} // namespace

TEST_CASE("MPI start-up and shutdown are set-up, not communication: the report agrees with what "
          "the program measured",
          "[integration][mpi][setup]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("hpcprof-setup-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path trace = dir / "share.hpcprof";
    auto run = runProcess({hpcprofBinary(), "run", "-o", trace.string(), "--", "mpirun", "-np",
                           std::to_string(kRanks), sampleBinary("mpi_setup_share")},
                          kMpiTestEnv);
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    const auto measured = parseMeasured(run.out);
    REQUIRE(measured.size() == size_t(kRanks));

    const json doc = reportOf(trace, dir / "r.json");
    REQUIRE(doc["ranks"].size() == size_t(kRanks));
    int64_t maxComm = 0;
    for (const json& r : doc["ranks"]) {
        checkRank(r, measured.at(r["rank"].get<int64_t>()));
        maxComm = std::max(maxComm, measured.at(r["rank"].get<int64_t>()).commNs);
    }
    CHECK(doc["summary"]["setup"]["ns"].get<int64_t>() > 0);
    CHECK(doc["pop"]["region"] == "init_to_finalize");

    // Each rank waits ~10 ms of every other 30 ms step: the exposed-communication finding is
    // right to fire, and its gain is the program's communication, not MPI_Init's 0.2-0.5 s.
    bool exposed = false;
    for (const json& f : doc["findings"]) {
        if (f["id"] != "exposed-communication") continue;
        exposed = true;
        INFO("gain " << f["estimated_gain_ns"] << " ns, the program's largest comm " << maxComm << " ns");
        CHECK(f["estimated_gain_ns"].get<int64_t>() <= maxComm * 11 / 10);
    }
    CHECK(exposed);

    // --include-setup: the POP metrics on the whole window, which is longer by the start-up.
    const json whole = reportOf(trace, dir / "w.json", {"--include-setup"});
    CHECK(whole["pop"]["region"] == "window");
    CHECK(whole["pop"]["runtime_ns"].get<int64_t>() > doc["pop"]["runtime_ns"].get<int64_t>());
    CHECK(whole["pop"]["parallel_efficiency"].get<double>() < doc["pop"]["parallel_efficiency"].get<double>());

    // Every human format shows set-up on its own.
    for (const char* format : {"text", "md", "html"}) {
        auto r = runProcess({hpcprofBinary(), "report", "--format", format, trace.string()});
        INFO(format);
        CHECK(r.exitCode == 0);
        CHECK(r.out.find("setup") != std::string::npos);
        CHECK(r.out.find("between MPI_Init and MPI_Finalize") != std::string::npos);
    }
    fs::remove_all(dir);
}

TEST_CASE("a Fortran program's MPI_Init and MPI_Finalize bound its POP region", "[integration][mpi][setup]") {
    if (!haveMpirun() || !fs::exists(sampleBinary("mpi_sample_f08"))) {
        WARN("SKIPPED: mpirun or the Fortran sample missing");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("hpcprof-setup-f-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path trace = dir / "f.hpcprof";
    auto run = runProcess({hpcprofBinary(), "run", "-o", trace.string(), "--", "mpirun", "-np", "2",
                           sampleBinary("mpi_sample_f08")},
                          kMpiTestEnv);
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    const json doc = reportOf(trace, dir / "f.json");
    CHECK(doc["pop"]["region"] == "init_to_finalize");
    for (const json& r : doc["ranks"]) {
        CHECK(r["setup_ns"].get<int64_t>() > 0);
        CHECK(r["region"]["window_ns"].get<int64_t>() < r["window_ns"].get<int64_t>());
    }
    fs::remove_all(dir);
}
