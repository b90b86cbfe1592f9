// SPDX-License-Identifier: MIT
// Never harm when the raw files cannot grow: real programs under `hpcprof run` with the raw
// directory on a small tmpfs that fills up (the previous agent died of SIGBUS there), on a
// filesystem without fallocate, and at the per-thread buffer limit. The program exits as it
// would without hpcprof, with the same output; the trace is partial and says, per thread, when
// recording stopped and why; every call is either recorded or counted.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"
#include "scratch_mount.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

ProcessResult profile(const std::string& output, const std::vector<std::string>& cmd,
                      const std::vector<std::string>& runOptions = {},
                      const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-o", output, "--sources", "io"};
    argv.insert(argv.end(), runOptions.begin(), runOptions.end());
    argv.push_back("--");
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return runProcess(argv, env);
}

int64_t stat(const TraceQuery& q, const std::string& name) {
    return q.scalar("SELECT value FROM stats WHERE name = '" + name + "'");
}

/// pwrite events recorded for each thread plus the records that thread's header counts as
/// lost, for the threads other than main ones that wrote to `file` (a LIKE pattern).
std::vector<std::string> callsAccountedPerThread(const TraceQuery& q, const std::string& file) {
    return q.rows("SELECT COUNT(*) + th.records_dropped FROM event_view e"
                  " JOIN thread th ON th.tid = e.tid JOIN process p ON p.id = th.process_id"
                  " WHERE th.tid != p.pid AND e.name LIKE 'pwrite%' AND e.object LIKE '%/" + file +
                  "' GROUP BY th.id ORDER BY th.id");
}

} // namespace

TEST_CASE("a program that fills the disk under hpcprof exits 0 with its own output, and the "
          "trace says when each thread stopped recording",
          "[integration][safety][disk_full]") {
    ScratchMount disk("tmpfs", "size=64m");
    if (!disk.ok()) {
        WARN("SKIPPED: " << disk.why());
        return;
    }
    constexpr long kCalls = 20000; // per thread: 4 * kCalls pwrite calls in all
    constexpr int kWorkers = 4;
    // Without hpcprof, on the same filesystem.
    fs::create_directory(disk.path() / "plain");
    ProcessResult plain = runProcess({sampleBinary("disk_full_sample"), disk / "plain",
                                      std::to_string(kWorkers), std::to_string(kCalls)});
    REQUIRE(plain.exitCode == 0);
    REQUIRE(plain.out == "workers 4, calls 80000 each, failed 0\ndisk filled: yes\n");
    fs::remove_all(disk.path() / "plain");

    fs::create_directory(disk.path() / "run");
    std::string trace = disk / "run/trace.hpcprof";
    ProcessResult r = profile(trace, {sampleBinary("disk_full_sample"), disk / "run",
                                      std::to_string(kWorkers), std::to_string(kCalls)});
    INFO(r.err);
    CHECK(r.exitCode == 0); // the previous agent: 135 (SIGBUS)
    CHECK(r.out == plain.out);
    CHECK_THAT(r.err, Catch::Contains("5 threads stopped recording") &&
                          Catch::Contains("filesystem was full (No space left on device)"));
    REQUIRE(fs::exists(trace));

    TraceQuery q(trace);
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "true");
    // Every thread, the main one included, stopped when its file could not grow any more.
    CHECK(q.rows("SELECT COUNT(*), stop_reason FROM thread WHERE recording_stopped_ts IS NOT NULL"
                 " GROUP BY stop_reason") == std::vector<std::string>{"5|disk_full"});
    // A worker makes pwrite calls only: each was recorded or counted, 80000 per thread.
    CHECK(callsAccountedPerThread(q, "worker-%") ==
          std::vector<std::string>(kWorkers, std::to_string(4 * kCalls)));
    // It recorded its first round (before the disk filled) and lost some of the second.
    CHECK(q.scalar("SELECT MIN(records_dropped) FROM thread") > 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view e JOIN thread th ON th.tid = e.tid"
                   " WHERE e.ts_ns + e.dur_ns > th.recording_stopped_ts") == 0);
    CHECK(stat(q, "threads_stopped_recording") == 5);
    CHECK(stat(q, "records_dropped") == q.scalar("SELECT SUM(records_dropped) FROM thread"));
    CHECK(stat(q, "records_dropped_disk_full") == stat(q, "records_dropped"));

    // The analysis ends the rank's window where its main thread stopped, and says so.
    ProcessResult report = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    REQUIRE(report.exitCode == 0);
    auto j = nlohmann::json::parse(report.out);
    int64_t mainStop = q.scalar("SELECT recording_stopped_ts FROM thread th JOIN process p"
                                " ON p.id = th.process_id WHERE th.tid = p.pid");
    CHECK(j["ranks"][0]["recording_stopped_ns"] == mainStop);
    CHECK(j["ranks"][0]["stop_reason"] == "disk_full");
    CHECK(j["ranks"][0]["window_ns"] == mainStop - q.scalar("SELECT start_ts FROM process"));
    ProcessResult text = runProcess({hpcprofBinary(), "report", trace});
    CHECK_THAT(text.out, Catch::Contains("RECORDING STOPPED: rank 0 at") &&
                             Catch::Contains("threads_stopped_recording = 5"));
}

TEST_CASE("with the raw directory's disk full from the start the program runs unharmed and "
          "every call of a thread without a raw file is counted",
          "[integration][safety][disk_full]") {
    ScratchMount disk("tmpfs", "size=1m");
    if (!disk.ok()) {
        WARN("SKIPPED: " << disk.why());
        return;
    }
    // Room for the run's lock file (one page, .hpcprof-run/lock), the process header (one page)
    // and the main thread's file (three pages), no more.
    uint64_t leave = 5 * 4096;
    REQUIRE(disk.freeBytes() > leave);
    {
        std::ofstream filler(disk / "filler", std::ios::binary);
        filler << std::string(disk.freeBytes() - leave, 'x');
    }
    REQUIRE(disk.freeBytes() == leave);
    TempDir data; // the program's own files are elsewhere: only hpcprof's disk is full
    std::vector<std::string> cmd = {sampleBinary("disk_full_sample"), data.path().string(), "4",
                                    "200", "nofill"};
    ProcessResult plain = runProcess(cmd);
    REQUIRE(plain.exitCode == 0);

    std::string trace = disk / "trace.hpcprof";
    ProcessResult r = profile(trace, cmd);
    INFO(r.err);
    // The command succeeded, the trace could not be written next to its raw data: 125.
    CHECK(r.exitCode == 125);
    CHECK(r.out == plain.out);
    CHECK_THAT(r.err, !Catch::Contains("killed by signal") && Catch::Contains("raw data kept in"));

    TempDir elsewhere;
    ProcessResult m = runProcess({hpcprofBinary(), "merge", trace + ".raw", "-o",
                                  elsewhere / "trace.hpcprof"});
    INFO(m.err);
    REQUIRE(m.exitCode == 0);
    CHECK_THAT(m.err, Catch::Contains("4 threads could not create a raw file"));
    TraceQuery q(elsewhere / "trace.hpcprof");
    CHECK(stat(q, "threads_without_raw_file") == 4);
    // The main thread had its file, and stopped recording when it had to grow.
    CHECK(q.rows("SELECT stop_reason FROM thread") == std::vector<std::string>{"disk_full"});
    // The four workers' 4 x 800 pwrite calls are all counted, beside what the main thread lost.
    CHECK(stat(q, "records_dropped") - q.scalar("SELECT SUM(records_dropped) FROM thread") ==
          4 * 800);
    CHECK(stat(q, "records_dropped_disk_full") == stat(q, "records_dropped"));
}

TEST_CASE("on a filesystem without fallocate raw files grow by writing and lose nothing",
          "[integration][safety][no_fallocate]") {
    ScratchMount disk("ramfs"); // no fallocate, no size limit
    if (!disk.ok()) {
        WARN("SKIPPED: " << disk.why());
        return;
    }
    TempDir data;
    constexpr long kCalls = 40000; // 2.5 MiB of records per thread: past the growing chunks
    std::string trace = disk / "trace.hpcprof";
    ProcessResult r = profile(trace, {sampleBinary("bulk_sample"), data.path().string(),
                                      std::to_string(kCalls), "3"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(trace);
    auto pwrites = [&](const std::string& file) {
        return q.scalar("SELECT COUNT(*) FROM event_view WHERE name LIKE 'pwrite%'"
                        " AND object LIKE '%/" + file + "'");
    };
    CHECK(pwrites("bulk-main.dat") == kCalls);
    CHECK(pwrites("bulk-thread.dat") == 3 * kCalls);
    CHECK(pwrites("bulk-child.dat") == kCalls);
    CHECK(stat(q, "records_dropped") == 0);
    CHECK(stat(q, "raw_files_unreadable") == 0);
    // Zeros written by the helper could land on records: there, only threads grow their files.
    CHECK(q.scalar("SELECT CAST(value AS INTEGER) FROM metadata"
                   " WHERE key = 'raw_chunks_mapped_ahead'") == 0);
}

TEST_CASE("a thread that reaches its buffer limit stops recording there, every call counted",
          "[integration][safety][buffer_limit]") {
    TempDir dir;
    constexpr long kCalls = 40000; // 2.5 MiB of records per thread, the limit is 1 MiB
    ProcessResult r = profile(dir / "trace.hpcprof",
                              {sampleBinary("bulk_sample"), dir.path().string(),
                               std::to_string(kCalls), "2"},
                              {}, {"HPCPROF_THREAD_BUFFER_MB=1"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    // Each worker opens its file, makes kCalls pwrite calls and closes it: the open and its path
    // are recorded, then the pwrite calls until 1 MiB, then every call (the close too) counted.
    CHECK(callsAccountedPerThread(q, "bulk-thread.dat") ==
          std::vector<std::string>(2, std::to_string(kCalls + 1)));
    // The main thread, both workers and the forked child's thread (the thread that starts the
    // workers records nothing).
    CHECK(q.scalar("SELECT COUNT(*) FROM thread WHERE stop_reason = 'buffer_limit'") == 4);
    CHECK(stat(q, "records_dropped_buffer_limit") == stat(q, "records_dropped"));
    CHECK(stat(q, "records_dropped_disk_full") == 0);
    CHECK_THAT(r.err, Catch::Contains("HPCPROF_THREAD_BUFFER_MB was reached"));
}
