// SPDX-License-Identifier: MIT
// Hung and killed jobs (issue 23): MPI programs that hang in known ways
// (tests/integration/programs/mpi_hang.c), ended by `hpcprof run --timeout`; the report's hang
// section names exactly the ranks, calls, communicators, instances and the wait chain. And a
// program SIGKILLed inside a long write (killed_write.c): the write is an unfinished event with
// its file and the bytes it asked for.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "live_job.hpp"
#include "process_runner.hpp"
#include "report_json.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

constexpr int kRanks = 3;
// Long enough for the ranks of a loaded 2-core machine to reach their hang (they print "ready"
// first: the test checks they all did), short enough for the suite.
const char* kTimeout = "5s";

struct Hang {
    nlohmann::json doc;    ///< the JSON report
    nlohmann::json ranks;  ///< doc["hang"]["ranks"], by rank
    std::string out, err;
};

Hang runHang(const TempDir& dir, const std::string& mode, const std::vector<std::string>& args = {}) {
    const std::string path = dir / (mode + ".hpcprof");
    std::vector<std::string> argv = {hpcprofBinary(), "run", "--timeout", kTimeout, "-o", path, "--",
                                     "mpirun", "-np", std::to_string(kRanks), sampleBinary("mpi_hang"), mode};
    argv.insert(argv.end(), args.begin(), args.end());
    auto run = runProcess(argv, kMpiTestEnv);
    Hang h{{}, {}, run.out, run.err};
    INFO(run.out << run.err);
    CHECK(run.err.find("time limit reached") != std::string::npos);
    for (int r = 0; r < kRanks; ++r)
        CHECK(run.out.find("rank " + std::to_string(r) + " ready") != std::string::npos);
    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    INFO(rep.err);
    REQUIRE(rep.exitCode == 0);
    h.doc = nlohmann::json::parse(rep.out);
    REQUIRE(h.doc.contains("hang"));
    h.ranks = h.doc["hang"]["ranks"];
    REQUIRE(h.ranks.size() == size_t(kRanks));
    return h;
}




/// The call rank `r` was inside (its first unfinished call), or null.
const nlohmann::json& callOf(const Hang& h, int r) {
    static const nlohmann::json kNone;
    const auto& calls = h.ranks[size_t(r)]["unfinished_calls"];
    return calls.empty() ? kNone : calls[0];
}

/// Rank `r` was inside `call`, waiting for world rank `peer` on `tag`, with `bytes` requested
/// (-1: not checked).
void checkWaitsFor(const Hang& h, int r, const char* call, int peer, int tag, int64_t bytes = -1) {
    INFO("rank " << r);
    CHECK(callOf(h, r)["call"] == call);
    CHECK(callOf(h, r)["peer"] == peer);
    CHECK(callOf(h, r)["tag"] == tag);
    if (bytes >= 0) CHECK(callOf(h, r)["requested_bytes"] == bytes);
}

/// The wait chain 0 -> 1 -> 2 of the point-to-point hangs: rank 2 in no call (computing), the
/// only chain, not a cycle, and rank 2 the culprit.
void checkChainEndsComputing(const Hang& h) {
    CHECK(h.ranks[2]["unfinished_calls"].empty());
    const auto& chains = h.doc["hang"]["chains"];
    REQUIRE(chains.size() == 1);
    CHECK(chains[0]["ranks"] == nlohmann::json::array({0, 1, 2}));
    CHECK(chains[0]["cycle"] == false);
    CHECK(chains[0]["end"].get<std::string>().rfind("computing", 0) == 0);
    CHECK(h.doc["hang"]["culprits"] == nlohmann::json::array({2}));
}

/// The report of the barrier a rank skipped: ranks 0 and 1 in MPI_Barrier #2, rank 2 computing.
void checkSkippedBarrier(const std::string& path) {
    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    Hang h{nlohmann::json::parse(rep.out), {}, {}, {}};
    REQUIRE(h.doc.contains("hang"));
    h.ranks = h.doc["hang"]["ranks"];
    REQUIRE(h.ranks.size() == size_t(kRanks));
    INFO(h.doc["hang"].dump(2));
    for (int r : {0, 1}) {
        CHECK(callOf(h, r)["call"] == "MPI_Barrier");
        CHECK(callOf(h, r)["communicator"] == "world");
        CHECK(callOf(h, r)["instance"] == 2);
    }
    CHECK(h.ranks[2]["unfinished_calls"].empty()); // computing
    CHECK(h.ranks[2]["last_call"] == "printf"); // its "ready" line, then the busy loop
    const auto& colls = h.doc["hang"]["collectives"];
    REQUIRE(colls.size() == 1);
    CHECK(colls[0]["ranks"] == nlohmann::json::array({0, 1}));
    CHECK(colls[0]["missing"] == nlohmann::json::array({2}));
    CHECK(h.doc["hang"]["culprits"] == nlohmann::json::array({2}));
    CHECK(h.doc["hang"]["mismatches"].empty());
    const nlohmann::json* f = findingIn(h.doc, "job-hang");
    REQUIRE(f);
    CHECK((*f)["ranks"] == nlohmann::json::array({2}));
    CHECK(evidenceOf(*f, "ranks_waiting") == 2);
}

/// `hpcprof run --timeout 60s` of mpi_hang MODE on kRanks ranks, left running (status and SIGUSR1
/// end it in the test); its pid.
pid_t startLiveHang(const std::string& path, const std::string& log, const char* mode) {
    return startProcess({hpcprofBinary(), "run", "--timeout", "60s", "-o", path, "--", "mpirun",
                         "-np", std::to_string(kRanks), sampleBinary("mpi_hang"), mode},
                        log, kMpiTestEnv);
}

} // namespace

TEST_CASE("a rank that skips a barrier: hpcprof status shows it while the job runs, SIGUSR1 "
          "ends the job, and the others wait in instance 2 of the world communicator",
          "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    const std::string path = dir / "barrier.hpcprof", log = dir / "run.log";
    pid_t run = startLiveHang(path, log, "barrier");
    REQUIRE(run > 0);
    // While it runs: ranks 0 and 1 inside MPI_Barrier #2 of world, rank 2 inside no call.
    auto inBarrier = [](const nlohmann::json& p) {
        return p.is_object() && p["calls"].size() == 1 && p["calls"][0]["call"] == "MPI_Barrier" &&
               p["calls"][0]["instance"] == 2 && p["calls"][0]["communicator"] == "world";
    };
    nlohmann::json st = statusUntil(path + ".raw", [&](const nlohmann::json& d) {
        return d.is_array() && inBarrier(statusOf(d, 0)) && inBarrier(statusOf(d, 1)) &&
               statusOf(d, 2).is_object() && statusOf(d, 2)["calls"].empty() &&
               statusOf(d, 2)["last_call"] == "printf";
    });
    INFO(st.dump(2));
    CHECK(inBarrier(statusOf(st, 0)));
    CHECK(inBarrier(statusOf(st, 1)));
    CHECK(statusOf(st, 2)["calls"].empty()); // computing
    CHECK(statusOf(st, 2)["ended"] == false);
    kill(run, SIGUSR1);
    waitForExit(run);
    const std::string out = readWholeFile(log);
    INFO(out);
    CHECK(out.find("SIGUSR1 received") != std::string::npos);
    CHECK(out.find("Hang: 2 calls had not returned") != std::string::npos); // the diagnosis

    checkSkippedBarrier(path);
}

TEST_CASE("two ranks call a different collective than the third on one communicator",
          "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    Hang h = runHang(dir, "mismatch");
    INFO(h.doc["hang"].dump(2));
    CHECK(callOf(h, 0)["call"] == "MPI_Allreduce");
    CHECK(callOf(h, 1)["call"] == "MPI_Allreduce");
    CHECK(callOf(h, 2)["call"] == "MPI_Bcast");
    for (int r = 0; r < kRanks; ++r) CHECK(callOf(h, r)["instance"] == 1);
    CHECK(callOf(h, 2)["peer"] == 0); // the broadcast's root
    const auto& mm = h.doc["hang"]["mismatches"];
    REQUIRE(mm.size() == 1);
    CHECK(mm[0]["communicator"] == "world");
    CHECK(mm[0]["calls"] == nlohmann::json::parse(
                                R"([{"rank":0,"call":"MPI_Allreduce #1 on world"},)"
                                R"({"rank":1,"call":"MPI_Allreduce #1 on world"},)"
                                R"({"rank":2,"call":"MPI_Bcast #1 on world"}])"));
    CHECK(findingIn(h.doc, "job-hang"));
}

TEST_CASE("a receive whose send never comes: the wait chain 0 -> 1 -> 2, rank 2 computing",
          "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    Hang h = runHang(dir, "chain");
    INFO(h.doc["hang"].dump(2));
    checkWaitsFor(h, 0, "MPI_Recv", 1, 7, 128 * 8);
    checkWaitsFor(h, 1, "MPI_Recv", 2, 8);
    checkChainEndsComputing(h);
}

TEST_CASE("a send-receive whose receive never comes and a synchronous send nobody receives: "
          "each names its partner (from rank 1, to rank 2), and the chain is 0 -> 1 -> 2",
          "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    Hang h = runHang(dir, "sendrecv");
    INFO(h.doc["hang"].dump(2));
    // While it waits, the send-receive names its receive (source 1, tag 6, 4 doubles), not its
    // send to rank 2, which completed eagerly.
    checkWaitsFor(h, 0, "MPI_Sendrecv", 1, 6, 4 * 8);
    checkWaitsFor(h, 1, "MPI_Ssend", 2, 9, 2 * 8);
    CHECK(h.ranks[0]["state"] == "in MPI_Sendrecv from rank 1 (tag 6) on world (32 bytes requested)");
    CHECK(h.ranks[1]["state"] == "in MPI_Ssend to rank 2 (tag 9) on world (16 bytes requested)");
    checkChainEndsComputing(h);
}

TEST_CASE("waits on non-blocking receives whose sends never come: status shows each wait's peer, "
          "and the report's chain is 0 -> 1 -> 2 with the tags", "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    const std::string path = dir / "waits.hpcprof", log = dir / "run.log";
    pid_t run = startLiveHang(path, log, "waits");
    REQUIRE(run > 0);
    auto waitsFor = [](const nlohmann::json& p, const char* call, int peer, int tag, int requests) {
        return p.is_object() && p["calls"].size() == 1 && p["calls"][0]["call"] == call &&
               p["calls"][0]["peer"] == peer && p["calls"][0]["tag"] == tag &&
               p["calls"][0]["requests"] == requests && p["calls"][0]["communicator"] == "world";
    };
    nlohmann::json st = statusUntil(path + ".raw", [&](const nlohmann::json& d) {
        return d.is_array() && waitsFor(statusOf(d, 0), "MPI_Wait", 1, 17, 1) &&
               waitsFor(statusOf(d, 1), "MPI_Waitall", 2, 18, 8) && statusOf(d, 2).is_object() &&
               statusOf(d, 2)["calls"].empty();
    });
    INFO(st.dump(2));
    CHECK(waitsFor(statusOf(st, 0), "MPI_Wait", 1, 17, 1));
    CHECK(statusOf(st, 0)["calls"][0]["requested_bytes"] == 64 * 8);
    CHECK(waitsFor(statusOf(st, 1), "MPI_Waitall", 2, 18, 8)); // the last of 8 (mpi_hang.c)
    CHECK(statusOf(st, 2)["calls"].empty()); // computing
    kill(run, SIGUSR1);
    waitForExit(run);

    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    Hang h{nlohmann::json::parse(rep.out), {}, {}, {}};
    REQUIRE(h.doc.contains("hang"));
    h.ranks = h.doc["hang"]["ranks"];
    REQUIRE(h.ranks.size() == size_t(kRanks));
    INFO(h.doc["hang"].dump(2));
    checkWaitsFor(h, 0, "MPI_Wait", 1, 17);
    checkWaitsFor(h, 1, "MPI_Waitall", 2, 18);
    CHECK(callOf(h, 0)["requests"] == 1); // what the waits were given, as `hpcprof status` said
    CHECK(callOf(h, 1)["requests"] == 8);
    checkChainEndsComputing(h);
}

TEST_CASE("waits whose receives lie between their sends (a halo exchange posting sends first and "
          "last): the in-flight calls name the receives' peers, and the chain is 0 -> 1 -> 2",
          "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    Hang h = runHang(dir, "halo");
    INFO(h.doc["hang"].dump(2));
    // Rank 0: 2 sends to rank 2, receives from rank 1 (tags 27, 28), 2 sends to rank 2: the
    // first receive, not a send (whose peer, 2, would make the chain 0 -> 2).
    checkWaitsFor(h, 0, "MPI_Waitall", 1, 27, 8 * 8);
    CHECK(callOf(h, 0)["communicator"] == "world");
    // Rank 1: 2 sends to rank 0, a started persistent receive from rank 2 (tag 21), 2 sends to
    // rank 0 (whose peer would make a false cycle 0 -> 1 -> 0).
    checkWaitsFor(h, 1, "MPI_Waitall", 2, 21, 16 * 8);
    checkChainEndsComputing(h);
}

TEST_CASE("a rank stuck in a read of a FIFO: the others wait for it in a barrier",
          "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    const std::string fifo = dir / "input.fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    Hang h = runHang(dir, "fifo", {fifo});
    INFO(h.doc["hang"].dump(2));
    CHECK(callOf(h, 1)["call"] == "read");
    CHECK(callOf(h, 1)["object"] == fifo);
    CHECK(callOf(h, 1)["requested_bytes"] == 4096);
    for (int r : {0, 2}) {
        CHECK(callOf(h, r)["call"] == "MPI_Barrier");
        CHECK(callOf(h, r)["instance"] == 0);
    }
    const auto& colls = h.doc["hang"]["collectives"];
    REQUIRE(colls.size() == 1);
    CHECK(colls[0]["missing"] == nlohmann::json::array({1}));
    CHECK(h.doc["hang"]["culprits"] == nlohmann::json::array({1}));
    CHECK(h.doc["hang"]["first_check"].get<std::string>().find("in read of " + fifo) != std::string::npos);
}

TEST_CASE("a FIFO read hang on a hostile file name: hpcprof status --json and the report escape "
          "the path the same way", "[integration][mpi][hang]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    // A line feed and a byte that is not UTF-8: nlohmann's dump() throws on the raw byte.
    const std::string fifo = dir / "in\nput\xff.fifo";
    const std::string shown = dir / "in\\x0Aput\\xFF.fifo"; // report::printable's form
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const std::string path = dir / "fifo.hpcprof", log = dir / "run.log";
    pid_t run = startProcess({hpcprofBinary(), "run", "--timeout", "60s", "-o", path, "--", "mpirun",
                              "-np", std::to_string(kRanks), sampleBinary("mpi_hang"), "fifo", fifo},
                             log, kMpiTestEnv);
    REQUIRE(run > 0);
    auto inRead = [&](const nlohmann::json& p) {
        return p.is_object() && p["calls"].size() == 1 && p["calls"][0]["call"] == "read" &&
               p["calls"][0]["object"] == shown;
    };
    nlohmann::json st = statusUntil(path + ".raw", [&](const nlohmann::json& d) {
        return d.is_array() && inRead(statusOf(d, 1));
    });
    INFO(st.dump(2));
    CHECK(inRead(statusOf(st, 1)));
    CHECK(statusOf(st, 1)["calls"][0]["requested_bytes"] == 4096);
    kill(run, SIGUSR1);
    waitForExit(run);
    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    const auto doc = nlohmann::json::parse(rep.out);
    CHECK(doc["hang"]["ranks"][1]["unfinished_calls"][0]["object"] == shown);
    // After the run (raw folder converted): status TRACE --json gives the hang object, escaped too.
    auto after = runProcess({hpcprofBinary(), "status", path, "--json"});
    REQUIRE(after.exitCode == 0);
    CHECK(nlohmann::json::parse(after.out)["ranks"][1]["unfinished_calls"][0]["object"] == shown);
}

TEST_CASE("a program SIGKILLed inside a long write: the write is unfinished, with its file and "
          "the bytes it asked for", "[integration][hang]") {
    TempDir dir;
    const std::string fifo = dir / "out.fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const std::string path = dir / "trace.hpcprof";
    auto run = runProcess({hpcprofBinary(), "run", "-o", path, "--", sampleBinary("killed_write"), fifo});
    INFO(run.err);
    CHECK(run.exitCode == 128 + 9);
    TraceQuery q(path);
    CHECK(q.rows("SELECT v.name, v.object, u.requested_bytes, v.bytes IS NULL FROM event_unfinished u"
                 " JOIN event_view v ON v.event_id = u.event_id") ==
          std::vector<std::string>{"write|" + fifo + "|1048576|1"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE unfinished = 1") == 1);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'calls_unfinished'") == 1);
    // It waited from its start until the process was last seen: at least until the kill came
    // (300 ms after the fork, before the write began) is not known to the trace; only that it
    // is not finished. Its duration is a lower bound, never negative.
    CHECK(q.scalar("SELECT MIN(dur_ns) >= 0 FROM event_view WHERE unfinished = 1") == 1);
}
