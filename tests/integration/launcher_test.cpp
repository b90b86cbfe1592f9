// SPDX-License-Identifier: MIT
// `hpcprof run` as a wrapper: exit codes, signals, stdin/stdout pass through; clear errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

TEST_CASE("exit codes pass through", "[integration][launcher]") {
    TempDir dir;
    for (int code : {0, 1, 7, 255}) {
        fs::remove(dir / "t.hpcprof");
        auto r = runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--", "sh",
                             "-c", "exit " + std::to_string(code)});
        CHECK(r.exitCode == code);
        CHECK(fs::exists(dir / "t.hpcprof"));
    }
}

TEST_CASE("the status main returns is the process's exit code in the trace", "[integration][launcher]") {
    TempDir dir;
    // signal_sample returns 2 from main when it gets no argument; a shell around it exits with
    // _exit(5). Both codes land in process.exit_code, the launcher passes on the shell's.
    auto r = runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--", "sh", "-c",
                         sampleBinary("signal_sample") + "; exit 5"});
    CHECK(r.exitCode == 5);
    TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT end_state, exit_code FROM process WHERE exe LIKE '%signal_sample'") ==
          std::vector<std::string>{"exited|2"});
    CHECK(q.rows("SELECT exit_code FROM process WHERE exe NOT LIKE '%signal_sample'") ==
          std::vector<std::string>{"5"});
}

TEST_CASE("a command killed by a signal gives 128 + N", "[integration][launcher]") {
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--", "sh", "-c",
                         "kill -TERM $$"});
    CHECK(r.exitCode == 128 + 15);
    CHECK_THAT(r.err, Catch::Contains("signal 15"));
}

TEST_CASE("signals sent to hpcprof reach the command", "[integration][launcher]") {
    TempDir dir;
    // The shell kills its parent (hpcprof) with SIGUSR1 and traps it when forwarded back.
    auto r = runProcess({hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--", "bash", "-c",
                         "trap 'echo got-usr1; exit 3' USR1; kill -USR1 $PPID; sleep 5 & wait"});
    CHECK(r.exitCode == 3);
    CHECK(r.out == "got-usr1\n");
}

TEST_CASE("stdin and stdout pass through byte for byte", "[integration][launcher]") {
    TempDir dir;
    std::string input;
    for (int i = 0; i < 5000; ++i) input += std::to_string(i) + (i % 7 ? " " : "\n");
    auto r = runProcess({hpcprofBinary(), "run", "-o", dir / "t.hpcprof", "--", "cat"}, {}, input);
    CHECK(r.exitCode == 0);
    CHECK(r.out == input);
    CHECK_THAT(r.err, Catch::Contains("trace written to"));
    TraceQuery q(dir / "t.hpcprof");
    // cat's reads of its stdin (a pipe) moved exactly the input.
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE name = 'read'"
                   " AND object_kind = 'pipe'") == int64_t(input.size()));
}

TEST_CASE("a missing command is a clear error with exit code 127", "[integration][launcher]") {
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-o", dir / "t.hpcprof", "--",
                         "no-such-command-hpcprof"});
    CHECK(r.exitCode == 127);
    CHECK_THAT(r.err, Catch::Contains("cannot run 'no-such-command-hpcprof'"));
    CHECK_FALSE(fs::exists(dir / "t.hpcprof"));
    CHECK_FALSE(fs::exists(dir / "t.hpcprof.raw"));
}

TEST_CASE("an unwritable output directory is a one-line error before anything runs",
          "[integration][launcher]") {
    TempDir dir;
    std::string marker = dir / "ran";
    auto r = runProcess({hpcprofBinary(), "run", "-o", "/proc/hpcprof-no/t.hpcprof", "--", "touch",
                         marker});
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::StartsWith("hpcprof run: cannot write"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("bad flags and a missing command give usage errors", "[integration][launcher]") {
    auto a = runProcess({hpcprofBinary(), "run", "--no-such-flag", "--", "true"});
    CHECK(a.exitCode == 2);
    CHECK_THAT(a.err, Catch::Contains("--no-such-flag"));
    auto b = runProcess({hpcprofBinary(), "run"});
    CHECK(b.exitCode == 2);
    auto c = runProcess({hpcprofBinary(), "run", "--sources", "bogus", "--", "true"});
    CHECK(c.exitCode == 2);
    CHECK_THAT(c.err, Catch::Contains("bogus"));
    auto d = runProcess({hpcprofBinary(), "frobnicate"});
    CHECK(d.exitCode == 2);
}

TEST_CASE("an existing trace is never overwritten without --force", "[integration][launcher]") {
    TempDir dir;
    std::ofstream(dir / "t.hpcprof") << "precious";
    auto r = runProcess({hpcprofBinary(), "run", "-o", dir / "t.hpcprof", "--", "true"});
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::Contains("already exists"));
    std::ifstream in(dir / "t.hpcprof");
    std::string content;
    in >> content;
    CHECK(content == "precious");
    auto f = runProcess({hpcprofBinary(), "run", "-q", "--force", "-o", dir / "t.hpcprof", "--", "true"});
    CHECK(f.exitCode == 0);
    TraceQuery q(dir / "t.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM process") == 1);
}

TEST_CASE("without -o a fresh timestamped trace appears in the current directory",
          "[integration][launcher]") {
    TempDir dir;
    auto r = runProcess({"sh", "-c", "cd " + dir.path().string() + " && " + hpcprofBinary() +
                                         " run -q -- true && " + hpcprofBinary() +
                                         " run -q -- true"});
    CHECK(r.exitCode == 0);
    int traces = 0;
    for (const auto& e : fs::directory_iterator(dir.path()))
        if (e.path().extension() == ".hpcprof" &&
            e.path().filename().string().rfind("hpcprof-", 0) == 0)
            ++traces;
    CHECK(traces == 2);
}

TEST_CASE("hpcprof merge converts a kept raw directory by hand", "[integration][launcher]") {
    TempDir dir;
    auto r = runProcess({hpcprofBinary(), "run", "-q", "--keep-raw", "-o", dir / "a.hpcprof", "--",
                         sampleBinary("io_sample"), dir.path().string()});
    REQUIRE(r.exitCode == 0);
    auto m = runProcess({hpcprofBinary(), "merge", dir / "a.hpcprof.raw", "-o", dir / "b.hpcprof"});
    INFO(m.err);
    REQUIRE(m.exitCode == 0);
    TraceQuery a(dir / "a.hpcprof"), b(dir / "b.hpcprof");
    const char* sql = "SELECT COUNT(*) * 1000000 + SUM(COALESCE(bytes, 0)) FROM event_view"
                      " WHERE object LIKE '%.dat'";
    CHECK(a.scalar(sql) == b.scalar(sql));
    CHECK(a.scalar(sql) > 0);
}

TEST_CASE("the agent loaded without a raw directory leaves the program alone",
          "[integration][launcher]") {
    TempDir dir;
    auto r = runProcess({sampleBinary("io_sample"), dir.path().string()},
                        {"LD_PRELOAD=" + agentLibrary(), "HPCPROF_RAW_DIR=/proc/nonexistent/x"});
    CHECK(r.exitCode == 0);
    CHECK(r.out == "io_sample done\n");
    CHECK(fs::file_size(dir / "posix.dat") == 28192);
}
