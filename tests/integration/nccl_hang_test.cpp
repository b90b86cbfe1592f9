// SPDX-License-Identifier: MIT
// NCCL ranks that hang in known ways (tests/stand_ins/nccl/nccl_hang.cpp, on the test-only
// stand-in libnccl), ended by `hpcprof run`: the hang section names, per NCCL communicator, the
// last collective instance each rank enqueued, the members that never enqueued the furthest
// one, and what the others are blocked in; `hpcprof status` shows the calls while the job runs.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "live_job.hpp"
#include "process_runner.hpp"
#include "report_json.hpp"

using namespace hpcprof::test;

namespace {




nlohmann::json reportOf(const std::string& path) {
    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    INFO(rep.err);
    REQUIRE(rep.exitCode == 0);
    auto doc = nlohmann::json::parse(rep.out);
    REQUIRE(doc.contains("hang"));
    return doc;
}

/// The state of rank `r` on NCCL communicator `c` (hang.nccl[i]), or null.
nlohmann::json ncclRank(const nlohmann::json& c, int r) {
    for (const auto& x : c["ranks"])
        if (x["rank"] == r) return x;
    return nullptr;
}

bool inAllReduce16(const nlohmann::json& p) {
    return p.is_object() && p["calls"].size() == 1 && p["calls"][0]["call"] == "ncclAllReduce" &&
           p["calls"][0]["instance"] == 16 && p["calls"][0]["requested_bytes"] == 1024;
}

/// `nccl_hang MODE` under `hpcprof run --timeout 60s`, for `hpcprof status` to watch while it
/// hangs; stop() sends the signal that makes the wrapper write the trace and the diagnosis.
struct HangingJob {
    HangingJob(const TempDir& dir, const std::string& mode)
        : path(dir / (mode + ".hpcprof")), log(dir / "run.log"),
          pid(startProcess({hpcprofBinary(), "run", "--timeout", "60s", "-o", path, "--",
                            sampleBinary("nccl_hang"), mode},
                           log)) {}
    void stop() const {
        kill(pid, SIGUSR1);
        waitForExit(pid);
    }
    std::string path, log;
    pid_t pid;
};

} // namespace

TEST_CASE("NCCL: a rank that never enqueues instance 16 of an allreduce; status shows the others "
          "inside it while the job runs",
          "[integration][gpu][nccl][hang]") {
    TempDir dir;
    const HangingJob job(dir, "skip");
    const std::string &path = job.path, &log = job.log;
    REQUIRE(job.pid > 0);
    nlohmann::json st = statusUntil(path + ".raw", [](const nlohmann::json& d) {
        return inAllReduce16(statusOf(d, 0)) && inAllReduce16(statusOf(d, 1)) &&
               inAllReduce16(statusOf(d, 2)) && statusOf(d, 3).is_object() &&
               statusOf(d, 3)["calls"].empty();
    });
    INFO(st.dump(2));
    for (int r : {0, 1, 2}) CHECK(inAllReduce16(statusOf(st, r)));
    CHECK(statusOf(st, 3)["calls"].empty()); // computing
    job.stop();
    INFO(readWholeFile(log));

    nlohmann::json doc = reportOf(path);
    const auto& hang = doc["hang"];
    INFO(hang.dump(2));
    REQUIRE(hang["nccl"].size() == 1);
    const auto& c = hang["nccl"][0];
    CHECK(c["communicator"].get<std::string>().rfind("nccl:", 0) == 0);
    CHECK(c["size"] == 4);
    CHECK(c["last_instance"] == 16);
    CHECK(c["last_call"] == "ncclAllReduce");
    CHECK(c["enqueued"] == nlohmann::json::array({0, 1, 2}));
    CHECK(c["behind"] == nlohmann::json::array({3}));
    for (int r : {0, 1, 2}) {
        CHECK(ncclRank(c, r)["instance"] == 16);
        CHECK(ncclRank(c, r)["completion"] == "in_flight");
        CHECK(ncclRank(c, r)["blocked_in"] == "ncclAllReduce");
    }
    CHECK(ncclRank(c, 3)["instance"] == 15);
    CHECK(ncclRank(c, 3)["call"] == "ncclAllReduce");
    CHECK(ncclRank(c, 3)["blocked_in"] == nullptr);
    CHECK(hang["culprits"] == nlohmann::json::array({3}));
    CHECK(hang["mismatches"].empty());
    const std::string check = hang["first_check"];
    CHECK(check.find("rank 3 never enqueued ncclAllReduce #16 on " + c["communicator"].get<std::string>() +
                     " (its last was ncclAllReduce #15") == 0);
    CHECK(check.find("ranks 0,1,2, which enqueued it, wait in ncclAllReduce") != std::string::npos);
    const nlohmann::json* f = findingIn(doc, "job-hang");
    REQUIRE(f);
    CHECK((*f)["ranks"] == nlohmann::json::array({3}));
}

TEST_CASE("NCCL: on one half of a split communicator a rank never enqueues the broadcast its "
          "partner waits in; the other half is idle, not stuck",
          "[integration][gpu][nccl][hang]") {
    TempDir dir;
    const std::string path = dir / "split.hpcprof";
    auto run = runProcess({hpcprofBinary(), "run", "--timeout", "5s", "-o",
                           path, "--", sampleBinary("nccl_hang"), "split"});
    INFO(run.out << run.err);
    CHECK(run.err.find("time limit reached") != std::string::npos);
    for (int r = 0; r < 4; ++r)
        CHECK(run.out.find("rank " + std::to_string(r) + " ready") != std::string::npos);
    nlohmann::json doc = reportOf(path);
    const auto& hang = doc["hang"];
    INFO(hang.dump(2));
    REQUIRE(hang["nccl"].size() == 2); // the halves; the parent had no collective
    const nlohmann::json* stuck = nullptr;
    const nlohmann::json* idle = nullptr;
    for (const auto& c : hang["nccl"]) (ncclRank(c, 2).is_object() ? stuck : idle) = &c;
    REQUIRE(stuck);
    REQUIRE(idle);
    CHECK((*stuck)["size"] == 2);
    CHECK((*stuck)["last_instance"] == 3);
    CHECK((*stuck)["last_call"] == "ncclBroadcast");
    CHECK((*stuck)["enqueued"] == nlohmann::json::array({2}));
    CHECK((*stuck)["behind"] == nlohmann::json::array({3}));
    CHECK(ncclRank(*stuck, 3)["instance"] == 2);
    CHECK(ncclRank(*stuck, 2)["blocked_in"] == "ncclBroadcast");
    CHECK((*idle)["last_instance"] == 2);
    CHECK((*idle)["enqueued"] == nlohmann::json::array({0, 1}));
    CHECK((*idle)["behind"].empty());
    CHECK(hang["culprits"] == nlohmann::json::array({3}));
    CHECK(hang["first_check"].get<std::string>().find("rank 3 never enqueued ncclBroadcast #3") == 0);
}

TEST_CASE("NCCL: ranks polling ncclCommGetAsyncError on work that never completes are shown "
          "polling since their first ncclInProgress; a rank whose poll ended is not",
          "[integration][gpu][nccl][hang]") {
    TempDir dir;
    const HangingJob job(dir, "poll");
    const std::string &path = job.path, &log = job.log;
    REQUIRE(job.pid > 0);
    auto polls = [](const nlohmann::json& p) {
        return p.is_object() && p["calls"].size() == 1 &&
               p["calls"][0]["call"] == "ncclCommGetAsyncError" && p["calls"][0]["polling"] == true &&
               p["calls"][0]["communicator"].is_string() &&
               p["calls"][0]["communicator"].get<std::string>().rfind("nccl:", 0) == 0;
    };
    // Rank 3 polled 1000 times (ncclInProgress), then got ncclSuccess: its state was cleared.
    nlohmann::json st = statusUntil(path + ".raw", [&](const nlohmann::json& d) {
        return polls(statusOf(d, 0)) && polls(statusOf(d, 1)) && polls(statusOf(d, 2)) &&
               statusOf(d, 3).is_object() && statusOf(d, 3)["calls"].empty() &&
               readWholeFile(log).find("rank 3 ready") != std::string::npos;
    });
    INFO(st.dump(2));
    for (int r : {0, 1, 2}) CHECK(polls(statusOf(st, r)));
    CHECK(statusOf(st, 3)["calls"].empty());
    // Still the first poll's time a moment later: the later polls leave the state alone.
    double since = statusOf(st, 0)["calls"][0]["since_s"];
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    nlohmann::json later = statusUntil(path + ".raw", [&](const nlohmann::json& d) {
        return polls(statusOf(d, 0));
    });
    CHECK(later.is_array());
    CHECK(statusOf(later, 0)["calls"][0]["since_s"].get<double>() >= since + 0.2);
    job.stop();
    INFO(readWholeFile(log));

    nlohmann::json doc = reportOf(path);
    const auto& hang = doc["hang"];
    INFO(hang.dump(2));
    REQUIRE(hang["ranks"].size() == 4);
    for (const auto& rank : hang["ranks"]) {
        if (rank["rank"] == 3) {
            CHECK(rank["unfinished_calls"].empty());
            continue;
        }
        REQUIRE(rank["unfinished_calls"].size() == 1);
        CHECK(rank["unfinished_calls"][0]["call"] == "ncclCommGetAsyncError");
        CHECK(rank["state"].get<std::string>().rfind("polling ncclCommGetAsyncError on nccl:", 0) == 0);
        CHECK(rank["state"].get<std::string>().find("answered ncclInProgress since its first poll") !=
              std::string::npos);
    }
}
