// SPDX-License-Identifier: MIT
// `hpcprof run` and the commands that write files, against each other and against other users:
// one run per output (a second one refuses before running anything), raw data of a killed run
// kept until the user says otherwise, outputs checked before anything runs, temporary files
// nobody else can redirect and that never outlive a failure (disk full included).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <future>

#include "cli_safety_support.hpp"
#include "process_runner.hpp"

using namespace hpcprof::test;
using namespace hpcprof::test::safety;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> runArgs(const std::string& output, const std::vector<std::string>& cmd,
                                 const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {hpcprofBinary(), "run", "-q", "-o", output};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--");
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return argv;
}

/// A shell command that waits at `gate`, then runs io_sample in `folder`.
std::vector<std::string> gatedIoSample(const Gate& gate, const std::string& folder) {
    return {"sh", "-c", gate.waitCommand() + "; exec " + sampleBinary("io_sample") + " " + folder};
}

std::future<ProcessResult> inBackground(std::vector<std::string> argv,
                                        std::vector<std::string> env = {}) {
    return std::async(std::launch::async, [argv, env] { return runProcess(argv, env); });
}

} // namespace

TEST_CASE("a second run with the same output refuses before running, the first stays exact",
          "[integration][safety][lock]") {
    TempDir dir;
    const std::string trace = dir / "t.hpcprof", marker = dir / "second-ran";
    const std::string other = dir / "other.hpcprof";
    REQUIRE(runProcess(runArgs(other, {"true"}, {"--keep-raw"})).exitCode == 0);
    REQUIRE(runProcess({hpcprofBinary(), "export", other, "-o", dir / "other.json"}).exitCode == 0);
    Gate gate(dir / "gate");
    auto first = inBackground(runArgs(trace, gatedIoSample(gate, dir.path())));
    REQUIRE(waitUntil([&] { return hasProcessFolder(trace + ".raw"); }));

    auto second = runProcess(runArgs(trace, {"touch", marker}));
    INFO(second.err);
    CHECK(second.exitCode == 2);
    CHECK_THAT(second.err, Catch::Contains("being written by another hpcprof run"));
    CHECK(lineCount(second.err) == 1);
    // --force replaces a finished trace, never one that is being written.
    auto forced = runProcess(runArgs(trace, {"touch", marker}, {"--force"}));
    CHECK(forced.exitCode == 2);
    CHECK_FALSE(fs::exists(marker));
    // Nor can the raw folder be converted under the running command.
    auto merge = runProcess({hpcprofBinary(), "merge", trace + ".raw", "-o", dir / "m.hpcprof"});
    CHECK(merge.exitCode == 2);
    CHECK_THAT(merge.err, Catch::Contains("still being written"));
    CHECK_FALSE(fs::exists(dir / "m.hpcprof"));
    // Nor does any other command write that output meanwhile, --force or not.
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {hpcprofBinary(), "merge", other + ".raw", "-o", trace, "--force"},
             {hpcprofBinary(), "import", dir / "other.json", "-o", trace, "--force"},
             {hpcprofBinary(), "export", other, "-o", trace, "--force"}}) {
        auto r = runProcess(argv);
        INFO(argv[1] << ": " << r.err);
        CHECK(r.exitCode == 2);
        CHECK_THAT(r.err, Catch::Contains("being written by a running hpcprof run"));
    }
    CHECK_FALSE(fs::exists(trace));

    REQUIRE(gate.release());
    auto r = first.get();
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(trace);
    checkIoSampleCalls(q);
    CHECK(q.scalar("SELECT COUNT(*) FROM process WHERE exe LIKE '%touch'") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE object LIKE '%second-ran'") == 0);
    CHECK_FALSE(fs::exists(trace + ".raw"));
    // The output is free again.
    CHECK(runProcess(runArgs(dir / "t2.hpcprof", {"true"})).exitCode == 0);
    CHECK(runProcess(runArgs(trace, {"touch", marker}, {"--force"})).exitCode == 0);
    CHECK(fs::exists(marker));
}

TEST_CASE("the wrappers of one job share the output, a second job's wrapper is refused",
          "[integration][safety][lock]") {
    TempDir dir;
    const std::string trace = dir / "job.hpcprof", marker = dir / "other-job-ran";
    fs::create_directory(dir / "d0");
    fs::create_directory(dir / "d1");
    Gate gate0(dir / "gate0"), gate1(dir / "gate1");
    auto rankEnv = [](const std::string& job, int rank) {
        return std::vector<std::string>{"OMPI_COMM_WORLD_RANK=" + std::to_string(rank),
                                        "OMPI_COMM_WORLD_SIZE=2", "PMIX_NAMESPACE=" + job};
    };
    auto rank0 = inBackground(runArgs(trace, gatedIoSample(gate0, dir / "d0")), rankEnv("jobA", 0));
    auto rank1 = inBackground(runArgs(trace, gatedIoSample(gate1, dir / "d1")), rankEnv("jobA", 1));
    REQUIRE(waitUntil([&] {
        int n = 0;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(trace + ".raw/jobA", ec))
            n += e.path().filename().string().rfind("proc-", 0) == 0;
        return n == 2;
    }));

    auto other = runProcess(runArgs(trace, {"touch", marker}), rankEnv("jobB", 0));
    INFO(other.err);
    CHECK(other.exitCode == 2);
    CHECK_THAT(other.err, Catch::Contains("being written by another hpcprof run"));
    CHECK_FALSE(fs::exists(marker));

    REQUIRE(gate0.release());
    REQUIRE(gate1.release());
    auto r0 = rank0.get(), r1 = rank1.get();
    INFO(r0.err << r1.err);
    REQUIRE(r0.exitCode == 0);
    REQUIRE(r1.exitCode == 0);
    TraceQuery q(trace);
    checkIoSampleCalls(q, "d0");
    checkIoSampleCalls(q, "d1");
    CHECK_FALSE(fs::exists(trace + ".raw"));
}

TEST_CASE("mpirun starting hpcprof per rank: a second job with the same output is refused",
          "[integration][safety][lock][mpi]") {
    if (runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    // mpirun says how many nodes the job has (one): the ranks record into the node-local
    // $TMPDIR and the job claims mpi.hpcprof.shards (user guide, "Running on a cluster").
    const std::vector<std::string> mpiEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                                             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                             "OMPI_MCA_mpi_yield_when_idle=1",
                                             "OMPI_MCA_rmaps_base_oversubscribe=1",
                                             "TMPDIR=" + (dir / "local")};
    fs::create_directory(dir / "local");
    const std::string trace = dir / "mpi.hpcprof", marker = dir / "second-job-ran";
    fs::create_directory(dir / "d0");
    fs::create_directory(dir / "d1");
    Gate gate0(dir / "gate0"), gate1(dir / "gate1");
    // Each rank waits at its own gate, then runs io_sample in its own folder.
    std::string rankCommand = "read x < " + dir.path().string() +
                              "/gate$OMPI_COMM_WORLD_RANK; exec " + sampleBinary("io_sample") +
                              " " + dir.path().string() + "/d$OMPI_COMM_WORLD_RANK";
    auto first = inBackground({"mpirun", "-np", "2", hpcprofBinary(), "run", "-q", "-o", trace,
                               "--", "sh", "-c", rankCommand},
                              mpiEnv);
    REQUIRE(waitUntil([&] {
        int n = 0;
        std::error_code ec;
        for (const auto& e : fs::recursive_directory_iterator(dir / "local", ec))
            n += e.path().filename().string().rfind("proc-", 0) == 0;
        return n == 2;
    }));
    auto second = runProcess({"mpirun", "-np", "2", hpcprofBinary(), "run", "-q", "-o", trace,
                              "--", "touch", marker},
                             mpiEnv);
    INFO(second.err);
    CHECK(second.exitCode != 0);
    CHECK_THAT(second.err, Catch::Contains("being written by another hpcprof run"));
    CHECK_FALSE(fs::exists(marker));

    REQUIRE(gate0.release());
    REQUIRE(gate1.release());
    auto r = first.get();
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(trace);
    CHECK(q.rows("SELECT rank FROM process WHERE rank IS NOT NULL ORDER BY rank") ==
          std::vector<std::string>{"0", "1"});
    checkIoSampleCalls(q, "d0");
    checkIoSampleCalls(q, "d1");
    CHECK_FALSE(fs::exists(trace + ".raw"));
    CHECK_FALSE(fs::exists(trace + ".shards"));
}

TEST_CASE("raw data of a killed run is kept, and the next run says how to convert it",
          "[integration][safety][lock]") {
    TempDir dir;
    const std::string trace = dir / "k.hpcprof", marker = dir / "next-ran";
    Gate gate(dir / "gate");
    auto killed = inBackground(runArgs(trace, gatedIoSample(gate, dir.path())));
    REQUIRE(waitUntil([&] { return hasProcessFolder(trace + ".raw"); }));
    pid_t wrapper = findProcess({hpcprofBinary(), " run ", trace});
    REQUIRE(wrapper > 0);
    REQUIRE(::kill(wrapper, SIGKILL) == 0);
    // The command lives on without its wrapper and finishes its work into the raw folder.
    REQUIRE(gate.release());
    CHECK(killed.get().exitCode == 128 + SIGKILL);
    std::vector<std::string> rawBefore = listing(trace + ".raw");

    auto next = runProcess(runArgs(trace, {"touch", marker}));
    INFO(next.err);
    CHECK(next.exitCode == 2);
    CHECK_THAT(next.err, Catch::Contains("did not finish"));
    CHECK_THAT(next.err, Catch::Contains("hpcprof merge " + trace + ".raw -o " + trace));
    CHECK_THAT(next.err, Catch::Contains("--force"));
    CHECK(lineCount(next.err) == 1);
    CHECK_FALSE(fs::exists(marker));
    CHECK(listing(trace + ".raw") == rawBefore);

    // What the message says works, and recovers every call.
    auto merge = runProcess({hpcprofBinary(), "merge", trace + ".raw", "-o", trace});
    INFO(merge.err);
    REQUIRE(merge.exitCode == 0);
    checkIoSampleCalls(TraceQuery(trace));

    // --force is the user's word: the stale folder goes, with a note.
    auto forced = runProcess(runArgs(trace, {"touch", marker}, {"--force"}));
    INFO(forced.err);
    CHECK(forced.exitCode == 0);
    CHECK_THAT(forced.err, Catch::Contains("deleted it (--force)"));
    CHECK(fs::exists(marker));
    CHECK_FALSE(fs::exists(trace + ".raw"));
}

TEST_CASE("raw data a run kept with --keep-raw is named as such and never deleted silently",
          "[integration][safety][lock]") {
    TempDir dir;
    const std::string trace = dir / "kept.hpcprof";
    REQUIRE(runProcess(runArgs(trace, {"true"}, {"--keep-raw"})).exitCode == 0);
    fs::remove(trace);
    auto next = runProcess(runArgs(trace, {"true"}));
    CHECK(next.exitCode == 2);
    CHECK_THAT(next.err, Catch::Contains("--keep-raw"));
    CHECK(hasProcessFolder(trace + ".raw"));
}

TEST_CASE("an output that is a folder, in a missing folder or in an unwritable one is refused "
          "before anything runs, by every command that writes one",
          "[integration][safety][output]") {
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::all); // nobody must reach its subfolders
    const std::string marker = dir / "ran";
    REQUIRE(runProcess(runArgs(dir / "ok.hpcprof", {sampleBinary("io_sample"), dir.path()},
                               {"--keep-raw"}))
                .exitCode == 0);
    REQUIRE(runProcess({hpcprofBinary(), "export", dir / "ok.hpcprof", "-o", dir / "ok.json"})
                .exitCode == 0);
    fs::create_directory(dir / "afolder");
    fs::create_directory(dir / "locked");
    fs::permissions(dir / "locked", fs::perms::owner_all | fs::perms::group_read |
                                        fs::perms::group_exec | fs::perms::others_read |
                                        fs::perms::others_exec);

    struct Case {
        std::string output, reason;
    };
    std::vector<Case> cases = {{dir / "afolder", "is a folder"},
                               {dir / "no-such-folder/t.out", "does not exist"},
                               {dir / "ok.json/t.out", "is not a folder"}};
    for (const auto& c : cases) {
        INFO(c.output);
        std::vector<std::vector<std::string>> commands = {
            runArgs(c.output, {"touch", marker}, {"--force"}),
            {hpcprofBinary(), "merge", dir / "ok.hpcprof.raw", "-o", c.output, "--force"},
            {hpcprofBinary(), "import", dir / "ok.json", "-o", c.output, "--force"},
            {hpcprofBinary(), "export", dir / "ok.hpcprof", "-o", c.output, "--force"},
            {hpcprofBinary(), "report", dir / "ok.hpcprof", "-o", c.output},
            {hpcprofBinary(), "diff", dir / "ok.hpcprof", dir / "ok.hpcprof", "-o", c.output}};
        for (const auto& argv : commands) {
            auto r = runProcess(argv);
            INFO(argv[1] << ": " << r.err);
            CHECK(r.exitCode == 2);
            CHECK_THAT(r.err, Catch::Contains(c.reason));
            CHECK(lineCount(r.err) == 1);
        }
        CHECK_FALSE(fs::exists(marker));
    }
    CHECK(fs::is_empty(dir / "afolder"));

    // Another user, in a folder only root may write: the real reason, still before running.
    fs::create_directory(dir / "open");
    fs::permissions(dir / "open", fs::perms::all | fs::perms::sticky_bit);
    const std::string nobodyMarker = dir / "open/ran";
    for (const auto& argv : std::vector<std::vector<std::string>>{
             runArgs(dir / "locked/t.hpcprof", {"touch", nobodyMarker}),
             {hpcprofBinary(), "export", dir / "ok.hpcprof", "-o", dir / "locked/t.json"},
             {hpcprofBinary(), "report", dir / "ok.hpcprof", "-o", dir / "locked/r.txt"}}) {
        int code = asNobody([&] {
            std::vector<std::string> args = argv;
            auto r = runProcess(args);
            bool ok = r.exitCode == 2 && r.err.find("Permission denied") != std::string::npos &&
                      lineCount(r.err) == 1;
            if (!ok) std::fprintf(stderr, "%s: exit %d: %s", args[1].c_str(), r.exitCode, r.err.c_str());
            return ok ? 0 : 1;
        });
        if (code < 0) {
            WARN("SKIPPED: cannot switch to user nobody here");
            return;
        }
        INFO(argv[1]);
        CHECK(code == 0);
    }
    CHECK_FALSE(fs::exists(nobodyMarker));
    CHECK(fs::is_empty(dir / "locked"));
}

TEST_CASE("names another user plants in a shared sticky folder never redirect an output",
          "[integration][safety][tmp]") {
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::all);
    const fs::path shared = dir.path() / "shared"; // like /tmp: everyone writes, sticky
    fs::create_directory(shared);
    fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
    const std::string victim = dir / "victim.txt";
    std::ofstream(victim) << "precious";
    fs::create_directory(dir / "work");

    // The stranger (nobody) pre-creates every name the old scheme used (OUTPUT.tmp-<pid>, for
    // the next 3000 pids), as links to the victim, plus a link at one output name itself.
    int nextPid = 0;
    std::ifstream("/proc/sys/kernel/ns_last_pid") >> nextPid;
    int planted = asNobody([&] {
        for (const char* out : {"t.hpcprof", "m.hpcprof", "i.hpcprof", "e.json"})
            for (int pid = nextPid; pid < nextPid + 3000; ++pid)
                if (::symlink(victim.c_str(),
                              (shared / (std::string(out) + ".tmp-" + std::to_string(pid))).c_str()) != 0)
                    return 1;
        return ::symlink(victim.c_str(), (shared / "linked.hpcprof").c_str()) == 0 ? 0 : 1;
    });
    if (planted < 0) {
        WARN("SKIPPED: cannot switch to user nobody here");
        return;
    }
    REQUIRE(planted == 0);
    // And keeps re-creating links at the old names the moment they disappear.
    NobodyLoop racer(dir / "stop", [&] {
        for (const char* out : {"t.hpcprof", "m.hpcprof", "i.hpcprof", "e.json"})
            for (int pid = nextPid; pid < nextPid + 3000; pid += 1)
                ::symlink(victim.c_str(),
                          (shared / (std::string(out) + ".tmp-" + std::to_string(pid))).c_str());
    });

    const std::string trace = (shared / "t.hpcprof").string();
    auto r = runProcess(runArgs(trace, {sampleBinary("io_sample"), dir / "work"}, {"--keep-raw", "--lanes"}));
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    checkIoSampleCalls(TraceQuery(trace));
    auto m = runProcess({hpcprofBinary(), "merge", "--lanes", trace + ".raw", "-o", shared / "m.hpcprof"});
    CHECK(m.exitCode == 0);
    auto e = runProcess({hpcprofBinary(), "export", trace, "-o", shared / "e.json"});
    CHECK(e.exitCode == 0);
    auto i = runProcess({hpcprofBinary(), "import", shared / "e.json", "-o", shared / "i.hpcprof"});
    CHECK(i.exitCode == 0);
    // A link at the output itself: refused without --force; with it the link is replaced.
    auto l = runProcess(runArgs(shared / "linked.hpcprof", {"true"}));
    CHECK(l.exitCode == 2);
    auto lf = runProcess(runArgs(shared / "linked.hpcprof", {"true"}, {"--force"}));
    CHECK(lf.exitCode == 0);
    racer.stop();

    CHECK(readWholeFile(victim) == "precious");
    checkIoSampleCalls(TraceQuery(shared / "m.hpcprof"));
    CHECK_FALSE(fs::is_symlink(shared / "linked.hpcprof"));
    CHECK(TraceQuery(shared / "i.hpcprof").scalar("SELECT COUNT(*) FROM process") > 0);
    // Nothing of ours is left beside the outputs (and the class summaries run --lanes and
    // merge --lanes keep next to their traces, docs/gui.md).
    for (const auto& name : listing(shared)) {
        INFO(name);
        bool strangers = fs::is_symlink(shared / name) && name.find(".tmp-") != std::string::npos;
        bool summary = !fs::is_symlink(shared / name) &&
                       (name == "t.hpcprof.lanes" || name == "m.hpcprof.lanes");
        CHECK((strangers || summary || name == "t.hpcprof" || name == "t.hpcprof.raw" ||
               name == "m.hpcprof" || name == "e.json" || name == "i.hpcprof" ||
               name == "linked.hpcprof"));
    }
    // --lanes keeps the summary; without it the conversion leaves it to the GUI's first opening.
    CHECK(fs::is_regular_file(shared / "t.hpcprof.lanes"));
    CHECK(fs::is_regular_file(shared / "m.hpcprof.lanes"));
    CHECK_FALSE(fs::exists(shared / "linked.hpcprof.lanes"));
}

TEST_CASE("a raw folder name another user took is neither used nor deleted",
          "[integration][safety][tmp]") {
    TempDir dir;
    fs::permissions(dir.path(), fs::perms::all);
    const fs::path shared = dir.path() / "shared";
    fs::create_directory(shared);
    fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
    const std::string marker = dir / "ran";
    int made = asNobody([&] {
        if (::mkdir((shared / "u.hpcprof.raw").c_str(), 0777) != 0) return 1;
        std::ofstream((shared / "u.hpcprof.raw/theirs").string()) << "theirs";
        return ::symlink("/etc", (shared / "v.hpcprof.raw").c_str()) == 0 ? 0 : 1;
    });
    if (made < 0) {
        WARN("SKIPPED: cannot switch to user nobody here");
        return;
    }
    REQUIRE(made == 0);
    auto u = runProcess(runArgs(shared / "u.hpcprof", {"touch", marker}, {"--force"}));
    CHECK(u.exitCode == 2);
    CHECK_THAT(u.err, Catch::Contains("belongs to another user"));
    auto v = runProcess(runArgs(shared / "v.hpcprof", {"touch", marker}, {"--force"}));
    CHECK(v.exitCode == 2);
    CHECK_THAT(v.err, Catch::Contains("not a folder"));
    CHECK_FALSE(fs::exists(marker));
    CHECK(readWholeFile(shared / "u.hpcprof.raw/theirs") == "theirs");
    CHECK(fs::is_symlink(shared / "v.hpcprof.raw"));
}

TEST_CASE("an interrupted merge leaves no temporary file", "[integration][safety][tmp]") {
    TempDir dir;
    fs::create_directory(dir / "work");
    fs::create_directory(dir / "out");
    // 800,000 events: converting them takes long enough to be interrupted half-way.
    REQUIRE(runProcess(runArgs(dir / "b.hpcprof",
                               {sampleBinary("bulk_sample"), dir / "work", "200000", "2"},
                               {"--keep-raw"}))
                .exitCode == 0);
    for (int sig : {SIGINT, SIGTERM}) {
        INFO("signal " << sig);
        auto merge = inBackground(
            {hpcprofBinary(), "merge", dir / "b.hpcprof.raw", "-o", dir / "out/t.hpcprof"});
        bool writing = waitUntil(
            [&] {
                for (const auto& name : listing(dir / "out"))
                    if (name.find(".tmp-") != std::string::npos) return true;
                return false;
            },
            std::chrono::milliseconds(5000));
        pid_t pid = findProcess({hpcprofBinary(), " merge ", dir / "out/t.hpcprof"});
        if (!writing || pid <= 0) {
            merge.get();
            WARN("SKIPPED: the merge finished before it could be interrupted");
            return;
        }
        REQUIRE(::kill(pid, sig) == 0);
        auto r = merge.get();
        CHECK(r.exitCode == 128 + sig);
        CHECK(listing(dir / "out").empty());
    }
}

TEST_CASE("disk full while converting leaves no temporary file, and merge works once there is "
          "room", "[integration][safety][tmp]") {
    TempDir dir;
    fs::create_directory(dir / "work");
    const std::vector<std::string> smallChunks = {"HPCPROF_CHUNK_KB=64"};
    // How much raw data this program leaves, to size a file system it fits but its trace
    // (at least 1.3 MB of 64 KiB pages) does not.
    REQUIRE(runProcess(runArgs(dir / "probe.hpcprof", {sampleBinary("io_sample"), dir / "work"},
                               {"--keep-raw"}),
                       smallChunks)
                .exitCode == 0);
    long rawKib = diskKib(dir / "probe.hpcprof.raw");
    SmallTmpfs small(dir.path() / "small", rawKib + 384);
    if (!small.mounted()) {
        WARN("SKIPPED: mounting a tmpfs is not allowed here");
        return;
    }
    const std::string trace = dir / "small/t.hpcprof";
    auto r = runProcess(runArgs(trace, {sampleBinary("io_sample"), dir / "work"}), smallChunks);
    INFO(r.err);
    CHECK(r.exitCode == 125); // the command succeeded, its trace could not be written
    CHECK_THAT(r.err, Catch::Contains("hpcprof merge " + trace + ".raw -o " + trace));
    CHECK(listing(dir / "small") == std::vector<std::string>{"t.hpcprof.raw"});

    auto again = runProcess({hpcprofBinary(), "merge", trace + ".raw", "-o", trace});
    CHECK(again.exitCode == 2);
    CHECK(listing(dir / "small") == std::vector<std::string>{"t.hpcprof.raw"});
    // A full file system for export and import too: nothing of theirs is left either.
    {
        std::ofstream filler(dir / "small/filler", std::ios::binary);
        std::string block(65536, 'x');
        while (filler.write(block.data(), std::streamsize(block.size()))) {
        }
    }
    auto e = runProcess({hpcprofBinary(), "export", dir / "probe.hpcprof", "-o", dir / "small/e.json"});
    CHECK(e.exitCode == 2);
    auto rep = runProcess({hpcprofBinary(), "report", dir / "probe.hpcprof", "-o", dir / "small/r.txt"});
    CHECK(rep.exitCode == 2);
    CHECK(listing(dir / "small") == std::vector<std::string>{"filler", "t.hpcprof.raw"});
    fs::remove(dir / "small/filler");

    // With room, the message's command recovers every call.
    REQUIRE(small.resize(rawKib + 16384));
    auto merged = runProcess({hpcprofBinary(), "merge", trace + ".raw", "-o", trace});
    INFO(merged.err);
    REQUIRE(merged.exitCode == 0);
    checkIoSampleCalls(TraceQuery(trace));
}
