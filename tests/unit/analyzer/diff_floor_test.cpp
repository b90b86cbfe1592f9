// SPDX-License-Identifier: MIT
// diffAnalyses' noise floor and matching on hand-made analyses: the absolute floor (the larger of
// --min-change-ns and a share of the base window), the relative floor, new and gone rows without
// a percentage, files matched by their path relative to each run's working directory.
#include <catch2/catch.hpp>

#include "hpcprof/analyzer/diff.hpp"

using namespace hpcprof::analyzer;

namespace {

Analysis analysisOf(int64_t wallNs, int64_t idleNs, const std::string& cwd, std::vector<TopItem> files) {
    Analysis a;
    a.summary.wallNs = wallNs;
    a.summary.exclusive[int(TimeClass::Idle)] = idleNs;
    RankBreakdown r;
    r.rank = 0;
    r.cwd = cwd;
    r.exclusive[int(TimeClass::Idle)] = idleNs;
    a.ranks.push_back(r);
    a.topFiles = std::move(files);
    return a;
}

const DiffRow& rowOf(const AnalysisDiff& d, const std::string& scope, const std::string& name) {
    for (const auto& r : d.rows)
        if (r.scope == scope && r.name == name) return r;
    FAIL("no row " << scope << " " << name);
    return d.rows.front();
}

TopItem file(const std::string& name, int64_t ns) {
    TopItem t;
    t.name = name;
    t.totalNs = ns;
    return t;
}

} // namespace

TEST_CASE("idle 12 -> 16 ms on a 13.7 s run is noise; the floor is 1 % of the window", "[unit][diff]") {
    auto d = diffAnalyses(analysisOf(13'700'000'000, 12'000'000, "", {}), analysisOf(13'700'000'000, 16'000'000, "", {}));
    CHECK(d.noiseFloorNs == 137'000'000);
    CHECK(rowOf(d, "class", "idle").verdict == DiffVerdict::Same);
    CHECK(d.regressions == 0);
    // 200 ms more idle is beyond both floors (+1667 %, above 137 ms).
    auto worse = diffAnalyses(analysisOf(13'700'000'000, 12'000'000, "", {}),
                              analysisOf(13'700'000'000, 212'000'000, "", {}));
    CHECK(rowOf(worse, "class", "idle").regression());
    CHECK(worse.regressions == 2); // the job's idle and rank 0's
}

TEST_CASE("a row from zero is new, to zero gone, never a percentage; the relative floor", "[unit][diff]") {
    DiffOptions o;
    o.minChangeNs = 1'000'000;
    o.minChangeWindowPct = 0;
    auto d = diffAnalyses(analysisOf(1'000'000'000, 0, "/r/a", {file("/r/a/old.dat", 30'000'000), file("/r/a/x", 100'000'000)}),
                          analysisOf(1'000'000'000, 16'000'000, "/r/b", {file("/r/b/new.dat", 500'000), file("/r/b/x", 108'000'000)}),
                          o);
    const DiffRow& idle = rowOf(d, "class", "idle");
    CHECK(std::string(idle.appearance()) == "new");
    CHECK_FALSE(idle.deltaPct.has_value());
    CHECK(idle.regression());
    const DiffRow& gone = rowOf(d, "file", "old.dat");
    CHECK(std::string(gone.appearance()) == "gone");
    CHECK(gone.verdict == DiffVerdict::Improvement);
    // New but below the absolute floor: within the noise.
    CHECK(rowOf(d, "file", "new.dat").verdict == DiffVerdict::Same);
    // Matched across folders; +8 % is under the 10 % relative floor.
    const DiffRow& x = rowOf(d, "file", "x");
    CHECK(x.deltaPct.value() == Approx(8.0));
    CHECK(x.verdict == DiffVerdict::Same);
}

TEST_CASE("paths relative to the longest working directory that holds them", "[unit][diff]") {
    CHECK(relativeToWorkingDir("/run/a/out/x.dat", {"/run", "/run/a"}) == "out/x.dat");
    CHECK(relativeToWorkingDir("/run/ab/x.dat", {"/run/a"}) == "/run/ab/x.dat");
    CHECK(relativeToWorkingDir("/etc/hosts", {"/run/a"}) == "/etc/hosts");
    CHECK(relativeToWorkingDir("/x.dat", {"/"}) == "x.dat");
    CHECK(relativeToWorkingDir("(no file)", {"/run/a"}) == "(no file)");
}

TEST_CASE("workers are matched by role, program and start order, not by pid", "[unit][diff]") {
    auto withWorkers = [](std::vector<int64_t> computeNs, int64_t firstPid) {
        Analysis a = analysisOf(10'000'000'000, 0, "/run", {});
        for (size_t i = 0; i < computeNs.size(); ++i) {
            ProcessEntry p;
            p.pid = firstPid + int64_t(i);
            p.role = ProcessRole::Worker;
            p.command = "/opt/bin/loader --shard " + std::to_string(i);
            RankBreakdown b;
            b.exclusive[int(TimeClass::Compute)] = computeNs[i];
            p.breakdown = b;
            a.processes.push_back(p);
        }
        ProcessEntry launcher; // not analysed: no rows
        launcher.role = ProcessRole::Launcher;
        launcher.command = "mpirun";
        a.processes.push_back(launcher);
        return a;
    };
    // Same work under other pids: nothing changes.
    AnalysisDiff same = diffAnalyses(withWorkers({2'000'000'000, 3'000'000'000}, 100),
                                     withWorkers({2'000'000'000, 3'000'000'000}, 900), DiffOptions{});
    CHECK(same.regressions == 0);
    CHECK(rowOf(same, "process", "worker loader #2 compute").base == 3e9);
    // The second worker 30 % slower: exactly that row regresses; a third worker is new.
    AnalysisDiff slower = diffAnalyses(withWorkers({2'000'000'000, 3'000'000'000}, 100),
                                       withWorkers({2'000'000'000, 3'900'000'000, 500'000'000}, 900), DiffOptions{});
    CHECK(rowOf(slower, "process", "worker loader #2 compute").verdict == DiffVerdict::Regression);
    CHECK(rowOf(slower, "process", "worker loader #1 compute").verdict == DiffVerdict::Same);
    const DiffRow& added = rowOf(slower, "process", "worker loader #3 compute");
    CHECK(added.base == 0);
    CHECK_FALSE(added.deltaPct.has_value());
    for (const auto& r : slower.rows) CHECK(r.name.find("mpirun") == std::string::npos);
}

TEST_CASE("communication calls that are not collectives get their own rows; collectives are not repeated",
          "[unit][diff]") {
    Analysis base = analysisOf(1'000'000'000, 0, "", {}), next = analysisOf(1'000'000'000, 0, "", {});
    base.topCollectives = {file("MPI_Allreduce", 100'000'000)};
    next.topCollectives = {file("MPI_Allreduce", 100'000'000)};
    base.topCommunication = {file("MPI_Send", 200'000'000), file("MPI_Allreduce", 100'000'000)};
    next.topCommunication = {file("MPI_Send", 400'000'000), file("MPI_Allreduce", 100'000'000)};
    const auto d = diffAnalyses(base, next);
    CHECK(rowOf(d, "call", "MPI_Send").regression());
    CHECK(rowOf(d, "call", "MPI_Send").deltaPct.value() == Approx(100.0));
    CHECK(rowOf(d, "collective", "MPI_Allreduce").verdict == DiffVerdict::Same);
    for (const auto& r : d.rows) CHECK_FALSE((r.scope == "call" && r.name == "MPI_Allreduce"));
}
