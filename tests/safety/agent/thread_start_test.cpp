// SPDX-License-Identifier: MIT
// Many short threads under `hpcprof run`: every thread's calls are recorded, each thread's raw
// file starts at three pages whatever it records (the previous agent gave every thread 1 MiB),
// and the spare files the agent makes ahead for starting threads are gone after a clean exit.
// (What a thread start costs is measured by bench/agent/thread_start.sh, not asserted here.)
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

TEST_CASE("a burst of short threads is recorded in full with a small raw file per thread",
          "[integration][safety][threads]") {
    TempDir dir;
    constexpr int kThreads = 200;
    constexpr int kCalls = 5;
    ProcessResult r = runProcess({hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--keep-raw",
                                  "--sources", "io", "--", sampleBinary("thread_burst_sample"),
                                  dir.path().string(), std::to_string(kThreads),
                                  std::to_string(kCalls)});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "threads 200, calls 5 each\n");
    TraceQuery q(dir / "trace.hpcprof");
    // Each worker: exactly its five pwrite calls.
    CHECK(q.rows("SELECT COUNT(*) FROM (SELECT e.tid, COUNT(*) AS n FROM event_view e"
                 " JOIN process p ON p.id = e.process_id WHERE e.tid != p.pid"
                 " AND e.name LIKE 'pwrite%' GROUP BY e.tid) WHERE n = 5") ==
          std::vector<std::string>{std::to_string(kThreads)});
    CHECK(q.scalar("SELECT COUNT(*) FROM thread") == kThreads + 1);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'records_dropped'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'raw_files_unreadable'") == 0);

    int files = 0, spares = 0;
    int64_t largest = 0;
    for (const auto& proc : fs::directory_iterator(dir.path() / "trace.hpcprof.raw"))
        for (const auto& f : fs::directory_iterator(proc.path())) {
            std::string name = f.path().filename().string();
            if (name.rfind("thread-", 0) != 0) continue;
            ++files;
            if (name.rfind("thread-spare-", 0) == 0) {
                struct stat st;
                REQUIRE(::stat(f.path().c_str(), &st) == 0);
                // A spare a thread took has its header; one left over would be empty.
                std::string head = readWholeFile(f.path().string()).substr(0, 8);
                if (head == std::string(8, '\0')) ++spares;
            }
            struct stat st;
            REQUIRE(::stat(f.path().c_str(), &st) == 0);
            largest = std::max<int64_t>(largest, int64_t(st.st_blocks) * 512);
        }
    CHECK(files == kThreads + 1);
    CHECK(spares == 0);
    CHECK(largest <= 3 * 4096); // header and two chunks of 64 records
}

TEST_CASE("threads starting and exiting 64 at a time are each recorded in full",
          "[integration][safety][threads]") {
    // Many threads take spare files and retire their lanes at once, while the helper makes
    // more files and unmaps the retired reservations.
    TempDir dir;
    constexpr int kThreads = 512;
    ProcessResult r = runProcess({hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--sources",
                                  "io", "--", sampleBinary("thread_burst_sample"),
                                  dir.path().string(), std::to_string(kThreads), "20", "64"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.rows("SELECT n, COUNT(*) FROM (SELECT e.tid, COUNT(*) AS n FROM event_view e"
                 " JOIN process p ON p.id = e.process_id WHERE e.tid != p.pid"
                 " AND e.name LIKE 'pwrite%' GROUP BY e.tid) GROUP BY n") ==
          std::vector<std::string>{"20|" + std::to_string(kThreads)});
    CHECK(q.scalar("SELECT COUNT(*) FROM thread") == kThreads + 1);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'records_dropped'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'raw_files_unreadable'") == 0);
}

TEST_CASE("a thread that gets the id of a thread that exited keeps both threads' records",
          "[integration][safety][threads]") {
    TempDir dir;
    ProcessResult r = runProcess({hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--sources",
                                  "io", "--", sampleBinary("tid_reuse_sample"),
                                  dir.path().string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    int tid = 0;
    char reused[8] = {};
    REQUIRE(std::sscanf(r.out.c_str(), "tid reused: %7s %d", reused, &tid) == 2);
    if (std::string(reused) != "yes") {
        WARN("SKIPPED: the second thread could not be given the first one's id (needs root to "
             "write /proc/sys/kernel/ns_last_pid, and no other process taking that id)");
        return;
    }
    TraceQuery q(dir / "trace.hpcprof");
    // Two threads with one id, each with its own calls (before, the second one's file replaced
    // the first one's).
    CHECK(q.rows("SELECT COUNT(*) FROM event_view WHERE tid = " + std::to_string(tid) +
                 " AND name LIKE 'pwrite%' GROUP BY track_id ORDER BY 1") ==
          std::vector<std::string>{"3", "5"});
    CHECK(q.scalar("SELECT COUNT(*) FROM thread WHERE tid = " + std::to_string(tid)) == 2);
}
