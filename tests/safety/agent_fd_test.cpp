// SPDX-License-Identifier: MIT
// The agent's descriptors (issue 17): a profiled program sees the descriptor table it sees
// without hpcprof. Real programs under `hpcprof run` with counters on: the first open, the
// number of files under a small `ulimit -n`, a program that closes and reuses low descriptors,
// one that dup2s a pipe onto them, and the full descriptor listing of plain, threaded and MPI
// programs, each compared with the same program run without hpcprof.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

std::string hygiene() { return HPCPROF_TEST_BUILD_DIR "/tests/fd_hygiene"; }

/// One way of profiling: the counter list and environment, and a name for the sections.
struct Setup {
    std::string name;
    std::string counters; ///< --counters value ("" = the default)
    std::vector<std::string> env;
};

/// The configurations every check runs under: the default counters, the software group, a
/// list that attaches perf_event counters to every thread (held by the sampler), the timer
/// thread from the start, and the fallback where the sampler gets no table of its own.
std::vector<Setup> setups() {
    return {{"default counters", "", {}},
            {"software group", "software", {}},
            {"perf_event counters", "task_clock,cpu_migrations,context_switches", {}},
            {"eager timer thread", "", {"HPCPROF_COUNTER_THREAD=eager"}},
            {"sampler without its own table", "", {"HPCPROF_COUNTER_SHARED_TABLE=1"}}};
}

ProcessResult plain(const std::vector<std::string>& cmd) { return runProcess(cmd); }

ProcessResult profiled(const TempDir& dir, const Setup& s, const std::vector<std::string>& cmd) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof"};
    if (!s.counters.empty()) {
        argv.push_back("--counters");
        argv.push_back(s.counters);
    }
    argv.push_back("--");
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return runProcess(argv, s.env);
}

/// The number after `key` in the program's output ("first 3" -> 3), -1 if absent.
long numberAfter(const std::string& out, const std::string& key) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(key + " (-?[0-9]+)"))) return -1;
    return std::stol(m[1]);
}

/// "fd N TARGET" lines -> N -> TARGET, with pipe/socket inode numbers, terminal numbers and Open
/// MPI's shared-memory segment numbers blanked (they differ between two runs of the same program:
/// mpirun gives each run new ones, and which local rank maps which segment is a race).
std::map<int, std::string> descriptors(const std::string& listing) {
    std::map<int, std::string> out;
    std::istringstream in(listing);
    std::string line;
    std::regex row("^fd ([0-9]+) (.*)$"), inode("\\[[0-9]+\\]"), pty("^/dev/pts/[0-9]+$"),
        segment("^(/dev/shm/open_mpi)\\.[0-9]+");
    std::smatch m;
    while (std::getline(in, line))
        if (std::regex_match(line, m, row)) {
            std::string target = std::regex_replace(std::string(m[2]), inode, "[]");
            target = std::regex_replace(target, pty, "/dev/pts/N");
            out[std::stoi(m[1])] = std::regex_replace(target, segment, "$1.N");
        }
    return out;
}

/// Descriptors that are plainly hpcprof's: perf_event, /proc files, the raw directory.
std::vector<std::string> agentLooking(const std::map<int, std::string>& fds) {
    std::vector<std::string> bad;
    for (const auto& [fd, target] : fds)
        if (target.find("perf_event") != std::string::npos || target.rfind("/proc/", 0) == 0 ||
            target.find(".raw/") != std::string::npos || target.find("hpcprof") != std::string::npos)
            bad.push_back(std::to_string(fd) + " " + target);
    return bad;
}

std::multiset<std::string> targets(const std::map<int, std::string>& fds) {
    std::multiset<std::string> out;
    for (const auto& [fd, target] : fds) out.insert(target);
    return out;
}

std::string describe(const std::map<int, std::string>& fds) {
    std::string s;
    for (const auto& [fd, target] : fds) s += std::to_string(fd) + "=" + target + " ";
    return s;
}

} // namespace

TEST_CASE("a profiled program's first open returns the descriptor it returns without hpcprof",
          "[safety][counters][fd]") {
    for (const char* mode : {"first-open", "st-first-open"}) {
        auto base = plain({hygiene(), mode});
        REQUIRE(base.exitCode == 0);
        long expected = numberAfter(base.out, "first");
        REQUIRE(expected >= 0);
        for (const Setup& s : setups()) {
            DYNAMIC_SECTION(mode << ", " << s.name) {
                TempDir dir;
                auto r = profiled(dir, s, {hygiene(), mode});
                INFO(r.out << r.err);
                REQUIRE(r.exitCode == 0);
                CHECK(numberAfter(r.out, "first") == expected);
            }
        }
    }
}

TEST_CASE("under a small ulimit -n a profiled program opens as many files as without hpcprof",
          "[safety][counters][fd]") {
    for (const char* limit : {"32"}) {
        for (const char* mode : {"count-files", "st-count-files"}) {
            std::vector<std::string> cmd = {"sh", "-c", std::string("ulimit -n ") + limit + "; exec " + hygiene() + " " + mode};
            auto base = plain(cmd);
            REQUIRE(base.exitCode == 0);
            long expected = numberAfter(base.out, "files");
            REQUIRE(expected > 0);
            for (const Setup& s : setups()) {
                DYNAMIC_SECTION("ulimit -n " << limit << ", " << mode << ", " << s.name) {
                    TempDir dir;
                    auto r = profiled(dir, s, cmd);
                    INFO(r.out << r.err);
                    REQUIRE(r.exitCode == 0);
                    // At most one fewer: the agent may hold one descriptor for the duration of
                    // one of its calls (a thread's record file opened while it maps it).
                    long got = numberAfter(r.out, "files");
                    CHECK(got <= expected);
                    CHECK(got >= expected - 1);
                }
            }
        }
    }
}

TEST_CASE("a profiled program that closes descriptors 3..63 and reuses them keeps every offset and byte",
          "[safety][counters][fd]") {
    for (const Setup& s : setups()) {
        DYNAMIC_SECTION(s.name) {
            TempDir dir, files;
            auto r = profiled(dir, s, {hygiene(), "reuse", files.path().string()});
            INFO(r.out << r.err);
            REQUIRE(r.exitCode == 0);
            CHECK(r.out.find("reuse ok 2621440 bytes") != std::string::npos);
            // The counters still count: the program's two threads were sampled (a sampler
            // without its own table lists no threads: it knows the main thread only).
            TraceQuery q(dir / "t.hpcprof");
            bool lists = s.env.empty() || s.env[0].rfind("HPCPROF_COUNTER_SHARED_TABLE", 0) != 0;
            CHECK(q.scalar("SELECT COUNT(DISTINCT tid) FROM counter_view WHERE counter = 'task_clock'") >=
                  (lists ? 2 : 1));
        }
    }
}

TEST_CASE("a pipe that a profiled program dup2s onto low descriptors delivers every byte to it",
          "[safety][counters][fd]") {
    for (const Setup& s : setups()) {
        DYNAMIC_SECTION(s.name) {
            TempDir dir;
            auto r = profiled(dir, s, {hygiene(), "dup2-pipe"});
            INFO(r.out << r.err);
            REQUIRE(r.exitCode == 0);
            CHECK(r.out.find("pipe ok 40000 bytes") != std::string::npos);
        }
    }
}

TEST_CASE("a profiled program holds exactly the descriptors it holds without hpcprof",
          "[safety][counters][fd]") {
    for (const char* mode : {"list", "st-list"}) {
        auto base = plain({hygiene(), mode});
        REQUIRE(base.exitCode == 0);
        auto expected = descriptors(base.out);
        REQUIRE(expected.count(0) == 1);
        for (const Setup& s : setups()) {
            DYNAMIC_SECTION(mode << ", " << s.name) {
                TempDir dir;
                auto r = profiled(dir, s, {hygiene(), mode});
                INFO(r.err);
                REQUIRE(r.exitCode == 0);
                auto got = descriptors(r.out);
                INFO("without hpcprof: " << describe(expected) << "\nwith: " << describe(got));
                CHECK(agentLooking(got).empty());
                std::set<int> a, b;
                for (const auto& [fd, t] : expected) a.insert(fd);
                for (const auto& [fd, t] : got) b.insert(fd);
                CHECK(a == b);
            }
        }
    }
}

TEST_CASE("a profiled MPI rank holds exactly the descriptors it holds without hpcprof",
          "[safety][counters][fd][mpi]") {
    if (!HPCPROF_TEST_HAVE_MPI || runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0) {
        WARN("SKIPPED: no MPI");
        return;
    }
    const std::vector<std::string> mpiEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                             "OMPI_MCA_rmaps_base_oversubscribe=1"};
    auto listing = [](const TempDir& out, int rank) {
        return descriptors(readWholeFile(out / ("rank-" + std::to_string(rank) + ".txt")));
    };
    TempDir baseOut;
    auto base = runProcess({"mpirun", "-np", "2", HPCPROF_TEST_BUILD_DIR "/tests/mpi_fd_probe", baseOut.path().string()},
                           mpiEnv);
    INFO(base.err);
    REQUIRE(base.exitCode == 0);
    for (const Setup& s : {setups()[0], setups()[2], setups()[4]}) {
        DYNAMIC_SECTION(s.name) {
            TempDir dir, out;
            Setup withMpi = s;
            withMpi.env.insert(withMpi.env.end(), mpiEnv.begin(), mpiEnv.end());
            auto r = profiled(dir, withMpi,
                              {"mpirun", "-np", "2", HPCPROF_TEST_BUILD_DIR "/tests/mpi_fd_probe", out.path().string()});
            INFO(r.err);
            REQUIRE(r.exitCode == 0);
            for (int rank = 0; rank < 2; ++rank) {
                auto expected = listing(baseOut, rank), got = listing(out, rank);
                INFO("rank " << rank << "\nwithout hpcprof: " << describe(expected) << "\nwith: " << describe(got));
                REQUIRE(!expected.empty());
                CHECK(agentLooking(got).empty());
                // The same descriptors as without hpcprof. Not necessarily under the same
                // numbers: Open MPI's own threads open theirs concurrently with the main thread,
                // in an order that timing decides.
                CHECK(targets(got) == targets(expected));
            }
            // And the ranks were counted, by the sampler thread as well (cpu_wait needs it, or
            // says why it could not).
            TraceQuery q(dir / "t.hpcprof");
            CHECK(q.scalar("SELECT COUNT(DISTINCT rank) FROM counter_view WHERE counter = 'task_clock'") == 2);
        }
    }
}

TEST_CASE("a sampler without a descriptor table of its own says so and still counts CPU time",
          "[safety][counters][fd]") {
    TempDir dir;
    auto r = profiled(dir, setups()[4], {hygiene(), "list"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "t.hpcprof");
    auto meta = nlohmann::json::parse(q.text("SELECT value FROM metadata WHERE key = 'counters'"));
    bool said = false;
    for (const auto& c : meta["unavailable"])
        if (c["counter"] == "timer_samples")
            said = c["reason"].get<std::string>().find("descriptor table of its own") != std::string::npos;
    CHECK(said);
    CHECK(r.err.find("counters not counted on this machine: timer_samples (the counter sampler could not take "
                     "a descriptor table of its own") != std::string::npos);
    // The timer still reads the CPU clock of the threads it knows (the main thread).
    CHECK(q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid") >= 3);
}
