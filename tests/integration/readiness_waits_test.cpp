// SPDX-License-Identifier: MIT
// Waits for a descriptor to become ready (poll, select, epoll) are waiting, not compute (issue 19,
// point 4): a C program that knows its waits (programs/readiness_waits.c), and a data-loader loop
// on Python's multiprocessing queue (programs/queue_loader.py), the mechanism PyTorch's
// DataLoader uses, whose main process must be shown waiting for its worker.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process_runner.hpp"
#include "report_json.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

struct Printed {
    int checks = 0, ready = 0, selected = 0, got = 0, bad = 0, badErrno = 0;
    long long pollNs = 0, selectNs = 0, epollNs = 0;
};

Printed parsePrinted(const std::string& out) {
    Printed p;
    const int n = std::sscanf(out.c_str(), "checks %d poll %d %lld select %d %lld epoll %d %lld bad %d errno %d",
                              &p.checks, &p.ready, &p.pollNs, &p.selected, &p.selectNs, &p.got, &p.epollNs,
                              &p.bad, &p.badErrno);
    REQUIRE(n == 9);
    return p;
}

bool within(double value, double expected, double tolerance) {
    return std::abs(value - expected) <= tolerance * expected;
}

} // namespace

TEST_CASE("poll, select and epoll waits are recorded as waits; zero-timeout checks are not",
          "[integration][process]") {
    ProcessResult plain = runProcess({sampleBinary("readiness_waits"), "150"});
    REQUIRE(plain.exitCode == 0);
    const Printed without = parsePrinted(plain.out);
    CHECK(without.bad == -1);

    TempDir dir;
    const std::string trace = dir / "t.hpcprof";
    ProcessResult run = runProcess({hpcprofBinary(), "run", "-o", trace, "--", sampleBinary("readiness_waits"), "150"});
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    const Printed with = parsePrinted(run.out);
    // The program sees what it sees without hpcprof: results and errno.
    CHECK(with.checks == without.checks);
    CHECK(with.ready == 1);
    CHECK(with.selected == 0);
    CHECK(with.got == 0);
    CHECK(with.bad == -1);
    CHECK(with.badErrno == without.badErrno);

    TraceQuery q(trace);
    const std::string parent = "(SELECT MIN(process_id) FROM event_view WHERE name = 'select')";
    // 1000 zero-timeout checks and one wait: only the wait is an event.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'poll' AND process_id = " + parent) == 2);
    const auto waits = q.rows("SELECT name, dur_ns, COALESCE(bytes, ''), COALESCE(object, ''), event_id FROM event_view"
                              " WHERE category = 'fd_wait' AND process_id = " + parent + " ORDER BY ts_ns");
    REQUIRE(waits.size() == 4);
    auto field = [](const std::string& row, int i) {
        std::istringstream in(row);
        std::string f;
        for (int k = 0; k <= i; ++k) std::getline(in, f, '|');
        return f;
    };
    // poll, woken by the worker's pipe after ~150 ms: one ready descriptor, the pipe.
    CHECK(field(waits[0], 0) == "poll");
    CHECK(within(std::stod(field(waits[0], 1)), double(with.pollNs), 0.10));
    CHECK(field(waits[0], 2) == "1");
    CHECK(field(waits[0], 3).rfind("pipe:", 0) == 0);
    // select until its 50 ms timeout, epoll_wait until its 30 ms timeout (on the epoll object).
    CHECK(field(waits[1], 0) == "select");
    CHECK(within(std::stod(field(waits[1], 1)), double(with.selectNs), 0.10));
    CHECK(field(waits[1], 2) == "0");
    CHECK(field(waits[2], 0) == "epoll_wait");
    CHECK(within(std::stod(field(waits[2], 1)), double(with.epollNs), 0.10));
    CHECK(field(waits[2], 3).find("eventpoll") != std::string::npos);
    // The failed poll: recorded as failed with its errno, no object read from a set the kernel refused.
    CHECK(field(waits[3], 0) == "poll");
    CHECK(field(waits[3], 3).empty());
    CHECK(q.scalar("SELECT errno FROM event_detail WHERE event_id = " + field(waits[3], 4)) == with.badErrno);

    // In the breakdown the waits are sync time of the parent, not compute.
    ProcessResult rep = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    const auto doc = nlohmann::json::parse(rep.out);
    const double waited = double(with.pollNs + with.selectNs + with.epollNs);
    CHECK(doc["ranks"][0]["sync_ns"].get<double>() >= 0.9 * waited);
}

namespace {

/// What queue_loader.py printed: its total wait, and its wait per worker pid.
struct LoaderPrinted {
    long long waitedNs = 0, trainedNs = 0;
    std::map<int64_t, double> waitedFor;
};

LoaderPrinted parseLoader(const std::string& out) {
    LoaderPrinted p;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        long long pid = 0, ns = 0;
        if (std::sscanf(line.c_str(), "waited_ns %lld trained_ns %lld", &p.waitedNs, &p.trainedNs) == 2) continue;
        if (std::sscanf(line.c_str(), "worker %lld waited_ns %lld", &pid, &ns) == 2) p.waitedFor[pid] = double(ns);
    }
    return p;
}

} // namespace

TEST_CASE("a main process taking batches from a multiprocessing queue waits for its data-loader workers",
          "[integration][process]") {
    // Debian's interpreter (a real binary; a pyenv shim would add shell processes to the run).
    const std::string python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    const std::string script = std::string(HPCPROF_TEST_TESTS_DIR) + "/integration/programs/queue_loader.py";
    TempDir dir;
    const std::string trace = dir / "t.hpcprof";
    // Two workers sharing one result queue, 6 batches each, loaded in 30 ms and 80 ms; the main
    // process trains 10 ms on each batch and waits the rest.
    ProcessResult run = runProcess({hpcprofBinary(), "run", "-o", trace, "--", python, script, "6", "0.01", "0.03", "0.08"});
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    const LoaderPrinted printed = parseLoader(run.out);
    REQUIRE(printed.waitedFor.size() == 2);
    const double waitedNs = double(printed.waitedNs);

    ProcessResult rep = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    INFO(rep.err);
    REQUIRE(rep.exitCode == 0);
    const auto doc = nlohmann::json::parse(rep.out);
    REQUIRE(doc["ranks"].size() == 1);
    const auto& main = doc["ranks"][0];
    INFO(main.dump());
    // Its time in get() is waiting (poll on the queue's pipe, then the read), not compute; each
    // worker is credited with the waits for the batches it delivered.
    const double waiting = main["sync_ns"].get<double>() + main["io_ns"].get<double>();
    CHECK(within(waiting, waitedNs, 0.10));
    CHECK(within(main["worker_wait_ns"].get<double>(), waitedNs, 0.10));
    int workers = 0;
    for (const auto& p : doc["processes"])
        if (p["role"] == "worker") {
            ++workers;
            INFO("worker " << p.dump());
            REQUIRE(printed.waitedFor.count(p["pid"].get<int64_t>()) == 1);
            const double measured = printed.waitedFor.at(p["pid"].get<int64_t>());
            // 10 %, or 5 ms for a small figure (a batch can land while another is being read).
            CHECK(std::abs(p["waited_for"]["ns"].get<double>() - measured) <= std::max(0.10 * measured, 5e6));
        }
    CHECK(workers == 2);
    // The finding names the wait for the workers; no cross-rank advice for one process.
    const auto* finding = findingIn(doc, "waits-for-workers");
    REQUIRE(finding);
    CHECK((*finding)["ranks"] == nlohmann::json::array({0}));
    CHECK(within(evidenceOf(*finding, "worker_wait_ns"), waitedNs, 0.10));
    CHECK(evidenceOf(*finding, "workers_waited_for") == 2);
    CHECK_FALSE(findingIn(doc, "load-imbalance"));

    // The text report says what was analysed: one process with two workers.
    ProcessResult text = runProcess({hpcprofBinary(), "report", trace});
    CHECK(text.out.find("1 process with 2 workers") != std::string::npos);
    CHECK(text.out.find("waits-for-workers") != std::string::npos);

    // A worker that keeps up (batches ready before they are asked for): no finding.
    const std::string fast = dir / "fast.hpcprof";
    ProcessResult quick = runProcess({hpcprofBinary(), "run", "-o", fast, "--", python, script, "8", "0.02", "0"});
    REQUIRE(quick.exitCode == 0);
    ProcessResult quickRep = runProcess({hpcprofBinary(), "report", fast, "--format", "json"});
    REQUIRE(quickRep.exitCode == 0);
    CHECK_FALSE(findingIn(nlohmann::json::parse(quickRep.out), "waits-for-workers"));
}
