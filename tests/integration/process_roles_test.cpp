// SPDX-License-Identifier: MIT
// Processes that are not ranks are analysed as what they are (issue 19): a parent that forks 3
// workers of unequal work, reads their results from pipes and waitpid()s them
// (programs/fork_workers.c) is 1 main process + 3 workers, each worker with its own compute as
// it measured it, the parent's wait for them counted as waiting, and no cross-rank advice.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process_runner.hpp"
#include "report_json.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

constexpr int kUnitMs = 200;

/// pid -> compute ns as the worker printed it, and the parent's measured wait.
std::map<int64_t, int64_t> printedCompute(const std::string& out, int64_t& parentWait) {
    std::map<int64_t, int64_t> byPid;
    std::istringstream in(out);
    std::string word, line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string a, b, c, d, e;
        int64_t i = 0, pid = 0, ns = 0;
        if (line.rfind("worker", 0) == 0 && (l >> a >> i >> b >> pid >> c >> ns)) byPid[pid] = ns;
        else if (line.rfind("parent", 0) == 0 && (l >> a >> b >> ns)) parentWait = ns;
    }
    return byPid;
}


} // namespace

TEST_CASE("a parent and the workers it forks are a main process and its workers, not ranks",
          "[integration][process]") {
    TempDir dir;
    const std::string trace = dir / "t.hpcprof";
    ProcessResult run = runProcess({hpcprofBinary(), "run", "-o", trace, "--", sampleBinary("fork_workers"),
                                    std::to_string(kUnitMs)});
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    int64_t parentWait = 0;
    const auto printed = printedCompute(run.out, parentWait);
    REQUIRE(printed.size() == 3);
    ProcessResult rep = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    INFO(rep.err);
    REQUIRE(rep.exitCode == 0);
    const auto doc = nlohmann::json::parse(rep.out);

    // One analysed unit (the parent), not "4 ranks"; no cross-rank analysis.
    CHECK(doc["ranks"].size() == 1);
    CHECK(doc["cross_rank"] == false);
    int mains = 0, workers = 0;
    int64_t parentPid = -1, waitedFor = 0;
    for (const auto& p : doc["processes"]) {
        if (p["role"] == "main") {
            ++mains;
            parentPid = p["pid"];
        }
    }
    for (const auto& p : doc["processes"]) {
        if (p["role"] != "worker") continue;
        ++workers;
        INFO("worker " << p.dump());
        CHECK(p["parent"] == parentPid);
        CHECK(p["unit"] == 0);
        REQUIRE(printed.count(p["pid"].get<int64_t>()) == 1);
        const double measured = double(printed.at(p["pid"].get<int64_t>()));
        const double compute = p["breakdown"]["compute_ns"].get<double>();
        CHECK(std::abs(compute - measured) <= 0.10 * measured);
        waitedFor += p["waited_for"]["ns"].get<int64_t>();
        CHECK(p["waited_for"]["calls"].get<int64_t>() >= 2); // its pipe read and its waitpid
    }
    CHECK(mains == 1);
    CHECK(workers == 3);

    // The parent's wait for its workers is waiting (pipe reads: io; waitpid: sync), not compute.
    const auto& parent = doc["ranks"][0];
    CHECK(parent["pid"] == parentPid);
    const double waiting = parent["io_ns"].get<double>() + parent["sync_ns"].get<double>();
    CHECK(std::abs(waiting - double(parentWait)) <= 0.10 * double(parentWait));
    CHECK(std::abs(double(waitedFor) - double(parentWait)) <= 0.10 * double(parentWait));
    CHECK(parent["compute_ns"].get<double>() < 0.5 * double(parentWait));

    // No cross-rank advice for processes that are not ranks.
    for (const char* id : {"load-imbalance", "straggler", "exposed-communication", "small-messages",
                           "low-collective-bandwidth"})
        CHECK_FALSE(findingIn(doc, id));
    CHECK(doc["pop"]["region"] == "none");

    // Every human-readable format lists the three workers under the parent.
    for (const char* format : {"text", "markdown", "html"}) {
        ProcessResult f = runProcess({hpcprofBinary(), "report", trace, "--format", format});
        INFO(format);
        CHECK(f.out.find("Processes that are not ranks") != std::string::npos);
        size_t rows = 0;
        for (size_t at = f.out.find("worker"); at != std::string::npos; at = f.out.find("worker", at + 1)) ++rows;
        CHECK(rows >= 3);
    }
}

TEST_CASE("a parent's waits leave errno as the real call left it, after a success too", "[integration][process]") {
    ProcessResult plain = runProcess({sampleBinary("wait_errno")});
    REQUIRE(plain.exitCode == 0);
    CHECK(plain.out == "reaped 1 exit 7 errno 4242; again -1 errno 10\n");
    TempDir dir;
    ProcessResult run = runProcess({hpcprofBinary(), "run", "-o", dir / "t.hpcprof", "--", sampleBinary("wait_errno")});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    CHECK(run.out == plain.out);
    TraceQuery q(dir / "t.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'waitpid'") == 2);
}

TEST_CASE("an MPI run: its ranks are ranks, mpirun is a launcher and never a rank",
          "[integration][process][mpi]") {
    if (runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0 ||
        !std::filesystem::exists(sampleBinary("mpi_sample"))) {
        WARN("SKIPPED: mpirun or the MPI sample not found");
        return;
    }
    // mpirun as root on a small machine: allow both, and let idle ranks yield the CPU.
    const std::vector<std::string> env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                          "OMPI_MCA_mpi_yield_when_idle=1", "OMPI_MCA_rmaps_base_oversubscribe=1"};
    TempDir dir;
    const std::string trace = dir / "t.hpcprof";
    ProcessResult run = runProcess(
        {hpcprofBinary(), "run", "-o", trace, "--", "mpirun", "-np", "4", sampleBinary("mpi_sample")}, env);
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    ProcessResult rep = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    const auto doc = nlohmann::json::parse(rep.out);
    CHECK(doc["ranks"].size() == 4);
    CHECK(doc["cross_rank"] == true);
    int ranks = 0, launchers = 0;
    for (const auto& p : doc["processes"]) {
        const std::string cmd = p["command"];
        if (p["role"] == "rank") {
            ++ranks;
            CHECK(cmd.find("mpi_sample") != std::string::npos);
            CHECK(cmd.rfind("mpirun", 0) != 0);
        }
        if (cmd.rfind("mpirun", 0) == 0 && p["parent"].is_null()) {
            ++launchers; // mpirun itself (its forks before exec() carry its command line too)
            CHECK(p["role"] == "launcher");
            CHECK_FALSE(p.contains("breakdown"));
        }
    }
    CHECK(ranks == 4);
    CHECK(launchers == 1);
    CHECK(doc["pop"]["region"] != "none");
}
