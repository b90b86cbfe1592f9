// SPDX-License-Identifier: MIT
// CPU counters for real, under `hpcprof run`: a spinning vs a sleeping program (task clock),
// forced context switches, region boundaries, counters that cannot be counted (recorded with the
// reason and printed once), PAPI through a software-defined event, and an oversubscribed MPI run
// (more ranks than cores) against one that fits.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <string>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

std::string workload() { return HPCPROF_TEST_BUILD_DIR "/tests/counter_workload"; }

ProcessResult profile(const TempDir& dir, const std::string& counters, std::vector<std::string> cmd,
                      std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof"};
    if (!counters.empty()) {
        argv.push_back("--counters");
        argv.push_back(counters);
    }
    argv.push_back("--");
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return runProcess(argv, env);
}

/// Delta of a counter on the program's main thread (first to last sample).
double mainDelta(const TraceQuery& q, const std::string& counter) {
    auto rows = q.rows("SELECT MAX(value) - MIN(value) FROM counter_view WHERE tid = pid AND counter = '" +
                       counter + "' AND pid = (SELECT pid FROM process WHERE exe LIKE '%counter_workload')");
    REQUIRE(rows.size() == 1);
    return rows[0].empty() ? -1 : std::stod(rows[0]);
}

size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("a spinning program uses its task clock, a sleeping one does not", "[integration][counters]") {
    TempDir spinDir, sleepDir;
    auto spin = profile(spinDir, "software", {workload(), "spin", "300"});
    auto sleep = profile(sleepDir, "software", {workload(), "sleep", "300"});
    REQUIRE(spin.exitCode == 0);
    REQUIRE(sleep.exitCode == 0);
    TraceQuery qs(spinDir / "t.hpcprof"), ql(sleepDir / "t.hpcprof");
    double spinClock = mainDelta(qs, "task_clock"), sleepClock = mainDelta(ql, "task_clock");
    double spinWait = mainDelta(qs, "cpu_wait");
    INFO("spin task clock " << spinClock << " ns, cpu wait " << spinWait << " ns; sleep " << sleepClock);
    // On a busy machine the spinner may get less than all of its 300 ms: but it wanted it all,
    // so on-CPU plus run-queue wait covers most of the run.
    CHECK(spinClock > 20e6);
    CHECK(spinClock + spinWait > 200e6);
    CHECK(sleepClock < 10e6);
    CHECK(spinClock > 10 * sleepClock);
    // A single-threaded program has no timer thread by default (it would make each of its
    // system calls dearer): samples at start and exit only.
    CHECK(qs.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid") <= 3);
}

TEST_CASE("the timer samples a program once it has threads, or at once when asked", "[integration][counters]") {
    for (const char* mode : {"threaded", "eager"}) {
        DYNAMIC_SECTION(mode) {
            TempDir dir;
            bool threaded = std::string(mode) == "threaded";
            auto r = profile(dir, "software", {workload(), threaded ? "tspin" : "spin", "300"},
                             threaded ? std::vector<std::string>{} : std::vector<std::string>{"HPCPROF_COUNTER_THREAD=eager"});
            REQUIRE(r.exitCode == 0);
            TraceQuery q(dir / "t.hpcprof");
            CHECK(mainDelta(q, "task_clock") > 20e6);
            // Samples come from the timer (10 ms default) and at exit.
            CHECK(q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid") >= 10);
            CHECK(q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'cpu_utilization'") >= 5);
            CHECK(q.scalar("SELECT MAX(value) <= 1.0 FROM counter_view WHERE counter = 'cpu_utilization'") == 1);
            // The sampler thread is hpcprof's own: it is not a timeline of the program.
            CHECK(q.scalar("SELECT COUNT(*) FROM thread WHERE name = 'hpcprof-counter'") == 0);
        }
    }
}

TEST_CASE("forced context switches are counted", "[integration][counters]") {
    TempDir dir;
    auto r = profile(dir, "software", {workload(), "switch", "200"});
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "t.hpcprof");
    CHECK(mainDelta(q, "voluntary_context_switches") >= 200);
    // perf counts from when its descriptor opens (the agent's start): a switch in flight then
    // may be missed.
    CHECK(mainDelta(q, "context_switches") >= 195);
    CHECK(q.text("SELECT unit FROM counter_view WHERE counter = 'voluntary_context_switches' LIMIT 1") == "count");
}

TEST_CASE("I/O boundaries are sampled at the entry and exit of every call when asked for",
          "[integration][counters]") {
    TempDir dir, off;
    auto r = profile(dir, "task_clock", {workload(), "io", "50"}, {"HPCPROF_COUNTER_BOUNDARIES=io",
                                                                   "HPCPROF_COUNTER_PERIOD_MS=0",
                                                                   "HPCPROF_COUNTER_MIN_GAP_US=0"});
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "t.hpcprof");
    // 50 writes on the main thread: 2 samples each, plus the exit sample (and a few for the
    // descriptor calls of start-up and exit).
    int64_t samples = q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid");
    CHECK(samples >= 101);
    CHECK(samples <= 110);
    auto r2 = profile(off, "task_clock", {workload(), "io", "50"}, {"HPCPROF_COUNTER_PERIOD_MS=0"});
    REQUIRE(r2.exitCode == 0);
    TraceQuery q2(off / "t.hpcprof");
    CHECK(q2.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid") <= 2);
    // With the default minimum gap between boundary samples (1 ms), 50 writes that take well
    // under a millisecond together get a sample or two, not a hundred.
    TempDir gap;
    auto r3 = profile(gap, "task_clock", {workload(), "io", "50"}, {"HPCPROF_COUNTER_BOUNDARIES=io",
                                                                    "HPCPROF_COUNTER_PERIOD_MS=0"});
    REQUIRE(r3.exitCode == 0);
    TraceQuery q3(gap / "t.hpcprof");
    CHECK(q3.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid") <= 6);
}

TEST_CASE("counters that cannot be counted are recorded with the reason and printed once",
          "[integration][counters]") {
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-o", dir / "t.hpcprof", "--counters",
                         "bogus_counter,task_clock", "--", "sh", "-c", workload() + " sleep 20; " + workload() + " sleep 20"});
    REQUIRE(r.exitCode == 0);
    INFO(r.err);
    // Three processes (sh and two children) could not count it: one line.
    CHECK(occurrences(r.err, "counters not counted on this machine: bogus_counter (unknown counter name)") == 1);
    TraceQuery q(dir / "t.hpcprof");
    auto meta = nlohmann::json::parse(q.text("SELECT value FROM metadata WHERE key = 'counters'"));
    REQUIRE(meta["unavailable"].size() == 1);
    CHECK(meta["unavailable"][0]["counter"] == "bogus_counter");
    CHECK(meta["unavailable"][0]["reason"] == "unknown counter name");
    CHECK(meta["unavailable"][0]["processes"] == 3);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'counters_unavailable'") == 3);
    CHECK(q.scalar("SELECT COUNT(DISTINCT pid) FROM counter_view WHERE counter = 'task_clock'") == 3);
}

TEST_CASE("PAPI counts a software-defined event of the program", "[integration][counters][papi]") {
    if (!HPCPROF_TEST_COUNTER_SDE) {
        WARN("SKIPPED: built without PAPI/libsde");
        return;
    }
    TempDir dir;
    auto r = profile(dir, "sde:::HPCTEST::ops,PAPI_TOT_INS,task_clock", {workload(), "sde", "1000"});
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "t.hpcprof");
    // Process-wide counter (no thread), read at exit: the program's 1000 increments.
    CHECK(q.rows("SELECT value FROM counter_view WHERE counter = 'sde:::HPCTEST::ops' AND tid IS NULL") ==
          std::vector<std::string>{"1000.0"});
    auto meta = nlohmann::json::parse(q.text("SELECT value FROM metadata WHERE key = 'counters'"));
    bool sdeCounted = false;
    for (const auto& c : meta["available"])
        if (c["counter"] == "sde:::HPCTEST::ops") sdeCounted = c["source"] == "papi";
    CHECK(sdeCounted);
    // PAPI_TOT_INS: counted where the CPU has a PMU, else listed with PAPI's reason.
    bool insKnown = false;
    for (const auto& c : meta["available"]) insKnown |= c["counter"] == "PAPI_TOT_INS";
    for (const auto& c : meta["unavailable"])
        if (c["counter"] == "PAPI_TOT_INS") insKnown = !c["reason"].get<std::string>().empty();
    CHECK(insKnown);
}

TEST_CASE("an oversubscribed MPI run fires the oversubscription advice, a run that fits does not",
          "[integration][counters][mpi]") {
    if (!HPCPROF_TEST_HAVE_MPI || runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0) {
        WARN("SKIPPED: no MPI");
        return;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const std::vector<std::string> env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                          "OMPI_MCA_mpi_yield_when_idle=1", "OMPI_MCA_rmaps_base_oversubscribe=1"};
    auto run = [&](long ranks, TempDir& dir) {
        auto r = profile(dir, "software",
                         {"mpirun", "-np", std::to_string(ranks), HPCPROF_TEST_BUILD_DIR "/tests/counter_mpi_workload",
                          "8", "8"},
                         env);
        INFO(r.err);
        REQUIRE(r.exitCode == 0);
        auto rep = runProcess({hpcprofBinary(), "report", dir / "t.hpcprof", "--format", "json"});
        REQUIRE(rep.exitCode == 0);
        return nlohmann::json::parse(rep.out);
    };
    auto fired = [](const nlohmann::json& doc) {
        for (const auto& f : doc["findings"])
            if (f["id"] == "oversubscription") return true;
        return false;
    };
    TempDir over, fits;
    auto o = run(3 * cores, over);
    INFO(o["counters"].dump());
    CHECK(o["counters"]["hosts"][0]["cpus"] == cores);
    CHECK(o["counters"]["hosts"][0]["busy_threads"].get<int64_t>() > cores);
    CHECK(fired(o));
    auto f = run(cores, fits);
    INFO(f["counters"].dump());
    CHECK(f["counters"]["hosts"][0]["busy_threads"].get<int64_t>() <= cores);
    CHECK_FALSE(fired(f));
}

TEST_CASE("every recorded MPI call is sampled at its entry and exit, polls are not",
          "[integration][counters][mpi]") {
    if (!HPCPROF_TEST_HAVE_MPI || runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0) {
        WARN("SKIPPED: no MPI");
        return;
    }
    const std::vector<std::string> env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                          "OMPI_MCA_mpi_yield_when_idle=1", "OMPI_MCA_rmaps_base_oversubscribe=1",
                                          "HPCPROF_COUNTER_PERIOD_MS=0", "HPCPROF_COUNTER_MIN_GAP_US=0"};
    TempDir dir;
    auto r = profile(dir, "task_clock", {"mpirun", "-np", "4", sampleBinary("mpi_sample")}, env);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "t.hpcprof");
    // Collectives, point-to-point, waits and setup calls alike (MPI_Init included): two samples
    // per call, plus the start and exit samples; a polling call (MPI_Iprobe, MPI_Test*) never.
    for (int rank = 0; rank < 4; ++rank) {
        INFO("rank " << rank);
        std::string rk = std::to_string(rank);
        int64_t calls = q.scalar("SELECT COUNT(*) FROM event_view WHERE category LIKE 'mpi%' AND tid = pid"
                                 " AND name NOT IN ('MPI_Iprobe', 'MPI_Test', 'MPI_Testany', 'MPI_Testall',"
                                 " 'MPI_Testsome') AND rank = " + rk);
        CHECK(calls > 20);
        CHECK(q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid"
                       " AND rank = " + rk) == 2 * calls + 2);
    }
}
