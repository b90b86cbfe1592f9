// SPDX-License-Identifier: MIT
// Real programs under `hpcprof run`: the trace holds exactly the I/O calls and bytes they made.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

ProcessResult profile(const TempDir& dir, const std::vector<std::string>& cmd,
                      const std::vector<std::string>& extraFlags = {}) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-o", dir / "trace.hpcprof"};
    argv.insert(argv.end(), extraFlags.begin(), extraFlags.end());
    argv.push_back("--");
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return runProcess(argv);
}

/// "function|calls|bytes" rows for one file, by the file's base name.
std::vector<std::string> callsOn(const TraceQuery& q, const std::string& file) {
    return q.rows("SELECT name, COUNT(*), COALESCE(SUM(bytes), 0) FROM event_view"
                  " WHERE object LIKE '%/" + file + "' GROUP BY name ORDER BY name");
}

/// The same, with the function folded to what it does, so plain and fortified builds compare.
std::map<std::string, std::pair<int64_t, int64_t>> byKind(const TraceQuery& q,
                                                          const std::string& file) {
    std::map<std::string, std::pair<int64_t, int64_t>> out;
    for (const auto& row : callsOn(q, file)) {
        auto a = row.find('|'), b = row.rfind('|');
        std::string name = row.substr(0, a);
        int64_t calls = std::stoll(row.substr(a + 1, b - a - 1));
        int64_t bytes = std::stoll(row.substr(b + 1));
        std::string kind = name;
        for (const char* base : {"pread", "pwrite", "fopen", "fread", "fwrite", "fclose", "fsync",
                                 "read", "write", "open", "close"})
            if (name.find(base) != std::string::npos) {
                kind = base;
                break;
            }
        out[kind].first += calls;
        out[kind].second += bytes;
    }
    return out;
}

void checkIoSampleTrace(const TempDir& dir) {
    TraceQuery q(dir / "trace.hpcprof");
    using P = std::pair<int64_t, int64_t>;
    auto posix = byKind(q, "posix.dat");
    CHECK(posix["open"] == P{2, 0});
    CHECK(posix["write"] == P{3, 11100});
    CHECK(posix["pwrite"] == P{2, 8192});
    CHECK(posix["read"] == P{5, 20000});
    CHECK(posix["pread"] == P{1, 512});
    CHECK(posix["close"] == P{2, 0});
    CHECK(posix.size() == 6);

    auto stdio = byKind(q, "stdio.dat");
    CHECK(stdio["fopen"] == P{2, 0});
    CHECK(stdio["fwrite"] == P{5, 2560});
    CHECK(stdio["fread"] == P{3, 2560});
    CHECK(stdio["fclose"] == P{2, 0});
    CHECK(stdio.size() == 4);

    auto thread = byKind(q, "thread.dat");
    CHECK(thread["open"] == P{1, 0});
    CHECK(thread["write"] == P{7, 2331});
    CHECK(thread["fsync"] == P{1, 0});
    CHECK(thread["close"] == P{1, 0});

    auto child = byKind(q, "child.dat");
    CHECK(child["open"] == P{1, 0});
    CHECK(child["write"] == P{4, 1000});
    CHECK(child["close"] == P{1, 0});

    // Per thread and per process: the worker thread did thread.dat only; the child is its own
    // process (forked, left through _exit) with the parent recorded.
    CHECK(q.scalar("SELECT COUNT(DISTINCT tid) FROM event_view WHERE object LIKE '%/thread.dat'") == 1);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE object LIKE '%/thread.dat' AND tid = pid") == 0);
    CHECK(q.scalar("SELECT COUNT(DISTINCT tid) FROM event_view WHERE object LIKE '%/posix.dat'"
                   " OR object LIKE '%/stdio.dat'") == 1);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE object LIKE '%/posix.dat' AND tid = pid") == 15);
    CHECK(q.scalar("SELECT COUNT(*) FROM process") == 2);
    CHECK(q.text("SELECT end_state FROM process p JOIN event_view e ON e.process_id = p.id"
                 " WHERE e.object LIKE '%/child.dat' LIMIT 1") == "quick_exit");
    CHECK(q.scalar("SELECT COUNT(*) FROM process WHERE parent_process_id IS NOT NULL") == 1);
    CHECK(q.text("SELECT DISTINCT class FROM event_view WHERE object LIKE '%.dat'") == "io");
    CHECK(q.text("SELECT DISTINCT object_kind FROM event_view WHERE object LIKE '%.dat'") == "file");
    // Positioned calls keep their offsets.
    CHECK(q.rows("SELECT d.offset FROM event d JOIN event_view e ON e.event_id = d.id"
                 " WHERE e.object LIKE '%/posix.dat' AND e.name LIKE 'pwrite%' ORDER BY d.offset") ==
          std::vector<std::string>{"20000", "24096"});
    // Nothing lost.
    CHECK(q.scalar("SELECT SUM(value) FROM stats WHERE severity != 'info'") == 0);
    // The agent's own files never appear.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE object LIKE '%.raw/%'") == 0);
}

} // namespace

TEST_CASE("the I/O sample's calls and bytes are recorded exactly, per file, thread and process",
          "[integration][io]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("io_sample"), dir.path().string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "io_sample done\n"); // the app's stdout is untouched
    checkIoSampleTrace(dir);
    TraceQuery q(dir / "trace.hpcprof");
    // The -O0 build calls the plain functions.
    CHECK(callsOn(q, "posix.dat") ==
          std::vector<std::string>{"close|2|0", "open|2|0", "pread|1|512", "pwrite|2|8192",
                                   "read|5|20000", "write|3|11100"});
}

TEST_CASE("the fortified -O2 build of the sample is captured equally", "[integration][io]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("io_sample_fortified"), dir.path().string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    checkIoSampleTrace(dir);
    TraceQuery q(dir / "trace.hpcprof");
    // It reaches libc through the large-file and _chk entry points.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('open64', '__open64_2')") >= 2);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name LIKE '%pread64%'") == 1);
}

TEST_CASE("writes inside a signal handler are recorded, nested in no other call",
          "[integration][io]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("signal_sample"), dir.path().string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(callsOn(q, "signal.dat") ==
          std::vector<std::string>{"close|1|0", "open|1|0", "write|5|212"});
}

/// Committed record slots of each kind in the raw thread files of `rawDir`, by kind byte.
std::map<int, int64_t> rawSlotKinds(const std::filesystem::path& rawDir) {
    std::map<int, int64_t> kinds;
    for (const auto& proc : std::filesystem::directory_iterator(rawDir))
        for (const auto& f : std::filesystem::directory_iterator(proc.path())) {
            if (f.path().filename().string().rfind("thread-", 0) != 0) continue;
            std::string bytes = readWholeFile(f.path());
            for (size_t at = 4096; at + 64 <= bytes.size(); at += 64)
                if (bytes[at] != 0) kinds[int(uint8_t(bytes[at]))]++;
        }
    return kinds;
}

TEST_CASE("runs of identical calls are kept exactly, with a signal handler recording among them",
          "[integration][io]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("repeat_sample"), dir.path().string(), "100000"},
                     {"--keep-raw"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    int64_t signalWrites = 0;
    REQUIRE(std::sscanf(r.out.c_str(), "signal writes %ld", &signalWrites) == 1);
    CHECK(signalWrites > 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(callsOn(q, "repeat.dat") == std::vector<std::string>{"close|1|0", "lseek|100001|0",
                                                             "open|1|0", "read|200000|2000000",
                                                             "write|100000|1000000"});
    CHECK(callsOn(q, "signal.dat") ==
          std::vector<std::string>{"close|1|0", "open|1|0",
                                   "write|" + std::to_string(signalWrites) + "|" +
                                       std::to_string(64 * signalWrites)});
    // Main's calls follow one another: each starts at or after the previous one's end.
    CHECK(q.scalar("SELECT COUNT(*) FROM (SELECT ts_ns, LAG(ts_ns + dur_ns) OVER (ORDER BY ts_ns,"
                   " event_id) AS previous_end FROM event_view WHERE object LIKE '%/repeat.dat')"
                   " WHERE ts_ns < previous_end") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE dur_ns < 0") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'records_torn'") == 0);
    // Most of main's 400,000 calls were written as 8-byte Repeat entries, not full records: the
    // runs of one call and the loop of two (lseek, read).
    auto kinds = rawSlotKinds(dir / "trace.hpcprof.raw");
    INFO("full events " << kinds[1] << ", repeat records " << kinds[4]);
    CHECK(kinds[1] < 50000);
    CHECK(kinds[4] > 400000 / 8 / 2);
}

TEST_CASE("a SIGKILLed program leaves a trace with every completed call and the kill counted",
          "[integration][io]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("crash_sample"), dir.path().string()});
    CHECK(r.exitCode == 128 + 9);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(callsOn(q, "crash.dat") == std::vector<std::string>{"open|1|0", "write|10|1000"});
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'processes_ended_abnormally'") == 1);
    CHECK(q.text("SELECT end_state FROM process") == "abnormal");
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "true");
    CHECK_THAT(r.err, Catch::Contains("DATA LOSS"));
}

TEST_CASE("a vfork child's exec does not mark its parent as ended: a later kill is still counted",
          "[integration][io]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("crash_sample"), dir.path().string(), "vfork"});
    CHECK(r.exitCode == 128 + 9);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(callsOn(q, "crash.dat") == std::vector<std::string>{"open|1|0", "write|10|1000"});
    // The parent was SIGKILLed; /bin/true, exec'ed by the vfork child, exited normally.
    CHECK(q.text("SELECT end_state FROM process WHERE exe LIKE '%crash_sample'") == "abnormal");
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'processes_ended_abnormally'") == 1);
}

TEST_CASE("a program that uses SQLite itself runs correctly and its I/O is seen",
          "[integration][io]") {
    TempDir dir;
    std::string db = dir / "app.sqlite";
    auto r = profile(dir, {"sqlite3", db,
                           "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3);"
                           " SELECT SUM(x) FROM t;"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "6\n");
    auto check = runProcess({"sqlite3", db, "SELECT COUNT(*) FROM t;"});
    CHECK(check.out == "3\n");
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE object = '" + db +
                   "' AND name LIKE 'pwrite%'") >= 2);
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE object = '" + db +
                   "' AND name LIKE 'pwrite%'") >= 8192);
}

TEST_CASE("fflush records the bytes it pushed out; a flush with nothing buffered is no I/O",
          "[integration][io]") {
    if (runProcess({"sh", "-c", "command -v awk"}).exitCode != 0) {
        WARN("SKIPPED: no awk");
        return;
    }
    TempDir dir;
    std::string out = dir / "flushed.txt";
    // awk's fflush() is C's fflush on the output stream: 3 bytes, then nothing, then 2 bytes.
    auto r = profile(dir, {"awk", "BEGIN { printf \"abc\" > \"" + out + "\"; fflush(\"" + out +
                                      "\"); fflush(\"" + out + "\"); printf \"de\" > \"" + out +
                                      "\"; fflush(\"" + out + "\") }"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.rows("SELECT bytes FROM event_view WHERE name = 'fflush' AND object = '" + out +
                 "' ORDER BY ts_ns") == std::vector<std::string>{"3", "2"});
}

TEST_CASE("exec'ed and forked shell children are each recorded", "[integration][io]") {
    TempDir dir;
    std::string out = dir / "out.txt";
    auto r = profile(dir, {"sh", "-c", "head -c 5000 /dev/zero > " + out + "; cat " + out +
                                           " | wc -c"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "5000\n");
    TraceQuery q(dir / "trace.hpcprof");
    // head writes the 5000 bytes into out.txt; cat moves them on (read/write or a kernel copy).
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE object = '" + out +
                   "' AND (name LIKE '%write%')") == 5000);
    CHECK(q.scalar("SELECT COUNT(*) FROM process WHERE exe LIKE '%/head'") == 1);
    CHECK(q.scalar("SELECT COUNT(*) FROM process WHERE exe LIKE '%/wc'") == 1);
    CHECK(q.scalar("SELECT COUNT(*) FROM process WHERE exe LIKE '%/cat'") == 1);
}

TEST_CASE("execl / execlp / execle run what they name and the new image is recorded too",
          "[integration][io]") {
    for (std::string mode : {"l", "lp", "le"}) {
        INFO("mode " << mode);
        TempDir dir;
        std::string out = dir / "exec.txt";
        auto r = profile(dir, {sampleBinary("exec_list_sample"), dir.path().string(), mode});
        INFO(r.err);
        REQUIRE(r.exitCode == 0);
        CHECK(readWholeFile(out) == mode); // execle: from FOO, its own environment's only entry
        TraceQuery q(dir / "trace.hpcprof");
        CHECK(q.text("SELECT end_state FROM process WHERE exe LIKE '%exec_list_sample'") == "exec");
        // The shell got the agent back even from execle's bare environment.
        CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE object = '" + out +
                       "' AND name LIKE '%write%'") == int64_t(mode.size()));
    }
}

TEST_CASE("the environment carries the agent into children that drop it", "[integration][io]") {
    TempDir dir;
    std::string out = dir / "env.txt";
    // env -i clears the environment before exec'ing sh: the agent must put itself back.
    auto r = profile(dir, {"env", "-i", "/bin/sh", "-c", "echo hi > " + out});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE object = '" + out + "'") >= 1);
}

TEST_CASE("TCP traffic is recorded as communication with the connection's endpoints",
          "[integration][socket]") {
    TempDir dir;
    auto r = profile(dir, {sampleBinary("socket_sample")});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "socket_sample done\n");
    TraceQuery q(dir / "trace.hpcprof");
    // Client side: 3 sends of 10000 B and a read of 100 B on one connection.
    CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes), category, class FROM event_view"
                 " WHERE name IN ('send', 'read') AND object LIKE 'socket:tcp 127.0.0.1:%'"
                 " GROUP BY name ORDER BY name") ==
          std::vector<std::string>{"read|1|100|socket|communication",
                                   "send|3|30000|socket|communication"});
    // Server side: recv totals 30000 B, its reply went out through write().
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE name = 'recv'") == 30000);
    CHECK(q.text("SELECT category FROM event_view WHERE name = 'write' AND object LIKE 'socket:%'") ==
          "socket");
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE name = 'write' AND object LIKE 'socket:%'") ==
          100);
    // The connection is named by both endpoints, and both sides name the same pair.
    CHECK(q.scalar("SELECT COUNT(DISTINCT object) FROM event_view WHERE name IN ('send', 'recv')") == 2);
    CHECK(q.text("SELECT object_kind FROM event_view WHERE name = 'send' LIMIT 1") == "socket");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'connect'") == 1);
}

TEST_CASE("a process that exec()s is one process, not an extra unnamed one with the same pid",
          "[integration][io]") {
    // sh exec()s io_sample (two images of one process, the first ended with end_state 'exec'),
    // which forks one child: two processes.
    TempDir dir;
    auto r = profile(dir, {"sh", "-c", "exec " + sampleBinary("io_sample") + " " + dir.path().string()});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    REQUIRE(q.scalar("SELECT COUNT(*) FROM process") == 3);
    REQUIRE(q.scalar("SELECT COUNT(DISTINCT pid) FROM process") == 2);
    REQUIRE(q.scalar("SELECT COUNT(*) FROM process WHERE end_state = 'exec'") == 1);
    // The run's summary: two processes, named by the program they ran last.
    CHECK(r.err.find("2 processes,") != std::string::npos);
    CHECK(r.err.find("  io_sample ") != std::string::npos);
    CHECK(r.err.find("  -  ") == std::string::npos);
    // The report (no ranks): one main process (its two images together: one unit and one entry
    // of the processes list) and the child it forked, a worker of it (issue 19: processes are
    // analysed as what they are).
    auto report = runProcess({hpcprofBinary(), "report", "--format", "json", dir / "trace.hpcprof"});
    INFO(report.out);
    REQUIRE(report.exitCode == 0);
    CHECK(report.out.find("\"ranks\": 1,") != std::string::npos);
    auto count = [&](const std::string& what) {
        size_t n = 0;
        for (size_t at = report.out.find(what); at != std::string::npos; at = report.out.find(what, at + 1)) ++n;
        return n;
    };
    CHECK(count("\"role\": \"main\"") == 1);
    CHECK(count("\"role\": \"worker\"") == 1);
}
