// SPDX-License-Identifier: MIT
// Long runs under `hpcprof run`: raw-file chunks are mapped ahead of the recording threads by the
// agent's provisioning helper, nothing is lost with or without it, the program never sees the
// helper (wait() reaps only its own child, its pipes close), and the helper never outlives it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

constexpr long kCalls = 60000; // ~3.7 MiB of records per thread: four 1 MiB chunks

ProcessResult runBulk(const TempDir& dir, const std::vector<std::string>& env, bool kill = false,
                      long calls = kCalls, int threads = 2) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--",
                                     sampleBinary("bulk_sample"), dir.path().string(),
                                     std::to_string(calls), std::to_string(threads)};
    if (kill) argv.push_back("kill");
    return runProcess(argv, env);
}

/// A provisioning diagnostic from the trace's metadata.
int64_t chunks(const TraceQuery& q, const std::string& key) {
    return q.scalar("SELECT CAST(value AS INTEGER) FROM metadata WHERE key = '" + key + "'");
}

int64_t pwritesTo(const TraceQuery& q, const std::string& file) {
    return q.scalar("SELECT COUNT(*) FROM event_view WHERE name LIKE 'pwrite%' AND bytes = 1"
                    " AND object LIKE '%/" + file + "'");
}

void checkEveryCall(const TraceQuery& q, long calls = kCalls, int threads = 2) {
    CHECK(pwritesTo(q, "bulk-main.dat") == calls);
    CHECK(pwritesTo(q, "bulk-thread.dat") == threads * calls);
    CHECK(pwritesTo(q, "bulk-child.dat") == calls);
    CHECK(q.scalar("SELECT COUNT(DISTINCT tid) FROM event_view WHERE object LIKE '%/bulk-thread.dat'") == threads);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'records_dropped'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'records_torn'") == 0);
}

/// Live tasks named like the sample (the helper inherits the program's name), waiting up to
/// `patience` for them to go.
int bulkTasksAfter(std::chrono::milliseconds patience) {
    auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        int n = 0;
        for (const auto& e : std::filesystem::directory_iterator("/proc")) {
            std::ifstream comm(e.path() / "comm");
            std::string name;
            if (comm && std::getline(comm, name) && name == "bulk_sample") {
                std::ifstream stat(e.path() / "stat");
                std::string pid, paren, state;
                stat >> pid >> paren >> state;
                if (state != "Z") ++n; // a zombie of another test's run is not a live helper
            }
        }
        if (n == 0 || std::chrono::steady_clock::now() > deadline) return n;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace

TEST_CASE("a long run keeps every call, its chunks mapped ahead, and the program never sees the helper",
          "[integration][io][provisioning]") {
    TempDir dir;
    auto r = runBulk(dir, {});
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "reaped 1\n"); // plain wait() reported the forked child only
    TraceQuery q(dir / "trace.hpcprof");
    checkEveryCall(q);
    // Three threads and a child, each past three chunk boundaries: every boundary is mapped by
    // the helper or, when a thread got there first (the helper is a task like any other and is
    // not always scheduled in time on a busy or 2-core host), by the thread itself; the helper
    // mapped some of them.
    CHECK(chunks(q, "raw_chunks_mapped_ahead") + chunks(q, "raw_chunks_mapped_on_thread") >= 4 * 3);
    CHECK(chunks(q, "raw_chunks_mapped_ahead") >= 1);
    CHECK(bulkTasksAfter(std::chrono::milliseconds(2000)) == 0);
}

TEST_CASE("without the provisioning helper the threads map their own chunks and lose nothing",
          "[integration][io][provisioning]") {
    TempDir dir;
    auto r = runBulk(dir, {"HPCPROF_PROVISION_HELPER=0"});
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "reaped 1\n");
    TraceQuery q(dir / "trace.hpcprof");
    checkEveryCall(q);
    CHECK(chunks(q, "raw_chunks_mapped_ahead") == 0);
    // Four files of four chunks each, all mapped on the recording threads (the first of each
    // is the thread's start and not counted).
    CHECK(chunks(q, "raw_chunks_mapped_on_thread") >= 4 * 3);
}

TEST_CASE("a SIGKILLed long run keeps every completed call and leaves no helper behind",
          "[integration][io][provisioning]") {
    TempDir dir;
    auto r = runBulk(dir, {}, /*kill=*/true);
    CHECK(r.exitCode == 128 + 9);
    CHECK(r.out == "reaped 1\n");
    TraceQuery q(dir / "trace.hpcprof");
    checkEveryCall(q);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'processes_ended_abnormally'") == 1);
    // The helper notices its parent is gone within its 100 ms poll.
    CHECK(bulkTasksAfter(std::chrono::milliseconds(2000)) == 0);
}

TEST_CASE("threads that come and go while the helper maps ahead of them lose nothing",
          "[integration][io][provisioning]") {
    // 64 KiB chunks (1024 records): 24 short-lived workers, four at a time, each past seven
    // chunk boundaries, so the helper is often mapping into a thread that is about to exit.
    TempDir dir;
    constexpr long kShortCalls = 8000;
    auto r = runBulk(dir, {"HPCPROF_CHUNK_KB=64"}, false, kShortCalls, 24);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "reaped 1\n");
    TraceQuery q(dir / "trace.hpcprof");
    checkEveryCall(q, kShortCalls, 24);
    CHECK(chunks(q, "raw_chunks_mapped_ahead") > 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'thread_files_truncated'") == 0);
}
