// SPDX-License-Identifier: MIT
// RDMA verbs capture end to end: an unmodified verbs program (tests/stand_ins/ibverbs/
// rdma_sample.cpp) against the stand-in libibverbs, under `hpcprof run`. The trace must hold
// exactly the work requests and completions the program made, with bytes, opcodes, QP numbers
// and post-to-completion times.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <map>
#include <regex>
#include <thread>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

constexpr int64_t kDelayNs = 2'000'000; // STAND_IN_VERBS_DELAY_US=2000

/// The least post-to-completion time a trace can show for the stand-in's `delayNs`. The stand-in
/// waits on CLOCK_MONOTONIC; the trace's times come from the time-stamp counter, at the slope
/// between two calibration pairs at least 10 ms apart, each good to 125 ns (half its bracket,
/// tsc_frequency.hpp): off by at most 2.5 parts in 10^5. The path adds 100-400 ns here.
constexpr int64_t atLeast(int64_t delayNs) { return delayNs - delayNs / 40000; }

ProcessResult profile(const TempDir& dir, const std::string& mode,
                      std::vector<std::string> env = {}) {
    env.insert(env.begin(), "STAND_IN_VERBS_DELAY_US=2000"); // a caller's own value wins
    return runProcess({hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--",
                       sampleBinary("rdma_sample"), mode},
                      env);
}

/// NAME=value from the sample's output.
int64_t printed(const std::string& out, const std::string& name) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex("(^|[ \\n])" + name + "=([0-9]+)")))
        FAIL("'" << name << "=' not in the sample's output:\n" << out);
    return std::stoll(m[2]);
}

std::string argOf(const TraceQuery& q, int64_t eventId, const std::string& key) {
    return q.text("SELECT value FROM event_arg WHERE event_id = " + std::to_string(eventId) +
                  " AND key = '" + key + "'");
}

/// A work request on a nic_queue lane that completed (dur > 0).
struct CompletedRequest {
    int64_t id, ts, end, dur;
};

/// The completed work requests, each checked alike: latency at least the stand-in's delay (and
/// under 2 s more), the same value in its latency_ns arg, status success.
std::vector<CompletedRequest> completedRequests(const TraceQuery& q) {
    std::vector<CompletedRequest> out;
    for (const auto& row : q.rows("SELECT event_id, ts_ns, ts_ns + dur_ns, dur_ns FROM event_view"
                                  " WHERE track_kind = 'nic_queue' AND dur_ns > 0")) {
        INFO(row);
        auto p1 = row.find('|'), p2 = row.find('|', p1 + 1), p3 = row.rfind('|');
        CompletedRequest c{std::stoll(row.substr(0, p1)), std::stoll(row.substr(p1 + 1, p2 - p1 - 1)),
                           std::stoll(row.substr(p2 + 1, p3 - p2 - 1)), std::stoll(row.substr(p3 + 1))};
        CHECK(c.dur >= atLeast(kDelayNs));
        CHECK(c.dur < kDelayNs + 2'000'000'000);
        CHECK(argOf(q, c.id, "latency_ns") == std::to_string(c.dur));
        CHECK(argOf(q, c.id, "status") == "success");
        out.push_back(c);
    }
    return out;
}

} // namespace

TEST_CASE("The trace holds exactly the work requests and completions a verbs program posted",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profile(dir, "basic");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(printed(r.out, "native_ops_after_open") == 0); // the table was taken over
    CHECK(printed(r.out, "foreign_ops_at_close") == 0);  // and restored before the close
    const int64_t qpA = printed(r.out, "qp_a"), qpB = printed(r.out, "qp_b");
    const int64_t empty = printed(r.out, "empty_polls_a") + printed(r.out, "empty_polls_b");
    TraceQuery q(dir / "trace.hpcprof");

    // One event per call on the thread, named as the function the program called.
    CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes) FROM event_view WHERE category = 'rdma'"
                 " AND name LIKE 'ibv_post%' GROUP BY name ORDER BY name") ==
          std::vector<std::string>{"ibv_post_recv|1|3000", "ibv_post_send|3|7608",
                                   "ibv_post_srq_recv|1|768"});
    CHECK(q.scalar("SELECT COUNT(DISTINCT track_kind) FROM event_view WHERE category = 'rdma'") == 1);
    CHECK(q.text("SELECT DISTINCT class FROM event_view WHERE category = 'rdma'") == "communication");
    // Polls that returned completions carry their bytes; empty polls fold with a count.
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE name = 'ibv_poll_cq' AND bytes IS NOT NULL") ==
          1000 + 2000 + 4096 + 1000 + 2000);
    CHECK(q.scalar("SELECT SUM(a.value) FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                   " WHERE e.name = 'ibv_poll_cq' AND a.key = 'completions'") == 5);
    CHECK(q.scalar("SELECT SUM(count) FROM event_view WHERE name = 'ibv_poll_cq' AND bytes IS NULL") ==
          empty);

    // One nic_queue lane per QP (and the SRQ), one event per work request, named by opcode.
    CHECK(q.rows("SELECT track, name, bytes, dur_ns > 0 FROM event_view WHERE track_kind = 'nic_queue'"
                 " ORDER BY track, ts_ns, event_id") ==
          std::vector<std::string>{
              "standin0 QP " + std::to_string(qpA) + "|SEND|1000|1",
              "standin0 QP " + std::to_string(qpA) + "|SEND|2000|1",
              "standin0 QP " + std::to_string(qpA) + "|RDMA_WRITE|4096|1",
              "standin0 QP " + std::to_string(qpA) + "|RDMA_WRITE|512|0", // unsignalled
              "standin0 QP " + std::to_string(qpB) + "|RECV|1000|1",
              "standin0 QP " + std::to_string(qpB) + "|RECV|2000|1",
              "standin0 SRQ|RECV|256|0", "standin0 SRQ|RECV|256|0", "standin0 SRQ|RECV|256|0"});
    CHECK(q.rows("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.track_kind = 'nic_queue' AND a.key = 'wr_id' ORDER BY e.track, e.ts_ns, e.event_id") ==
          std::vector<std::string>{"1", "2", "3", "4", "101", "102", "201", "202", "203"});
    CHECK(q.scalar("SELECT COUNT(*) FROM track WHERE kind = 'nic_queue' AND stream = " + std::to_string(qpA)) == 1);

    // Post-to-completion: from the start of the posting call to the end of the poll that
    // returned the completion; the stand-in completes no earlier than its delay.
    for (const CompletedRequest& c : completedRequests(q)) {
        INFO("event " << c.id);
        const int64_t ts = c.ts, end = c.end;
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name LIKE 'ibv_post%' AND ts_ns = " +
                       std::to_string(ts)) == 1);
        // (within 1 ns: the call's end is converted as start + duration, rounded separately)
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_poll_cq' AND bytes IS NOT NULL"
                       " AND ABS(ts_ns + dur_ns - " + std::to_string(end) + ") <= 1") == 1);
    }
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE track_kind = 'nic_queue' AND dur_ns > 0") == 5);
    // RDMA write: remote address and key as posted.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                   " WHERE e.name = 'RDMA_WRITE' AND a.key = 'rkey'") == 2);

    // Resource lifecycles give the traffic its context.
    CHECK(q.rows("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_reg_mr' AND a.key = 'length'") ==
          std::vector<std::string>{"65536", "65536"});
    CHECK(q.rows("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_create_qp' AND a.key = 'qp_type'") ==
          std::vector<std::string>{"RC", "RC"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_modify_qp'") == 6);
    CHECK(q.rows("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_modify_qp' AND a.key = 'remote_qpn' ORDER BY e.ts_ns") ==
          std::vector<std::string>{std::to_string(qpB), std::to_string(qpA)});
    CHECK(q.text("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_open_device' AND a.key = 'link_rate_mbps'") == "100000");
    for (const char* n : {"ibv_open_device", "ibv_close_device", "ibv_alloc_pd", "ibv_dealloc_pd",
                          "ibv_create_srq", "ibv_destroy_srq"})
        CHECK(q.scalar(std::string("SELECT COUNT(*) FROM event_view WHERE name = '") + n + "'") == 1);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_unmatched_completions'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_aggregated'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_contexts_adopted'") == 0);
}

TEST_CASE("RDMA events name the rank at the other end of their queue pair", "[rdma]") {
    TempDir dir;
    // The sample connects its two QPs to each other: the peer of both is the process's own rank.
    ProcessResult r = profile(dir, "basic", {"OMPI_COMM_WORLD_RANK=3"});
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT rank FROM process") == 3);
    CHECK(q.rows("SELECT name, peer, COUNT(*) FROM event_view WHERE name LIKE 'ibv_post%'"
                 " GROUP BY 1, 2 ORDER BY 1") ==
          std::vector<std::string>{"ibv_post_recv|3|1", "ibv_post_send|3|3", "ibv_post_srq_recv||1"});
    // Work requests on the two QP lanes have it too; the shared receive queue serves any QP.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE track_kind = 'nic_queue' AND peer = 3") == 6);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE track LIKE '% SRQ' AND peer IS NULL") == 3);
}

TEST_CASE("Threads posting on different QPs get one queue lane each, on their own thread track",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profile(dir, "threads");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes), SUM(dur_ns >= " + std::to_string(atLeast(kDelayNs)) +
                 ") FROM event_view WHERE track_kind = 'nic_queue' GROUP BY track ORDER BY SUM(bytes)") ==
          std::vector<std::string>{"RDMA_WRITE|20|20480|20", "RDMA_WRITE|20|40960|20"});
    // Each QP's posts come from exactly one thread, and the two threads differ.
    auto perQp = q.rows("SELECT a.value, COUNT(DISTINCT e.tid), MIN(e.tid) FROM event_arg a"
                        " JOIN event_view e ON e.event_id = a.event_id"
                        " WHERE e.name = 'ibv_post_send' AND a.key = 'qp_num' GROUP BY a.value");
    REQUIRE(perQp.size() == 2);
    CHECK(perQp[0].find("|1|") != std::string::npos);
    CHECK(perQp[1].find("|1|") != std::string::npos);
    CHECK(perQp[0].substr(perQp[0].rfind('|')) != perQp[1].substr(perQp[1].rfind('|')));
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_post_send'") == 40);
}

TEST_CASE("Beyond the configured rate, work requests fold into per-QP aggregates counted in stats",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profile(dir, "threads", {"HPCPROF_RDMA_EVENT_RATE=1000"}); // 1 per ms
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    int64_t full = q.scalar("SELECT COUNT(*) FROM event_view WHERE track_kind = 'nic_queue'"
                            " AND name = 'RDMA_WRITE'");
    int64_t aggregated = q.scalar("SELECT SUM(count) FROM event_view WHERE track_kind = 'nic_queue'"
                                  " AND name = 'aggregated work requests'");
    CHECK(full + aggregated == 40);
    CHECK(aggregated > 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_aggregated'") == aggregated);
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE track_kind = 'nic_queue'") == 20 * 1024 + 20 * 2048);
    // Every aggregate says how long its work requests took.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                   " WHERE e.name = 'aggregated work requests' AND a.key = 'latency_histogram'"
                   " AND (a.value LIKE 'le_%ns:%' OR a.value LIKE 'gt_%ns:%')") ==
          q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'aggregated work requests'"));
    // The calls themselves stay one event each on the threads.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_post_send'") == 40);
}

namespace {

/// Completions per latency bin of an aggregate's latency_histogram ("le_1024ns:3,gt_1048576ns:1"):
/// (upper bound in ns, or -lower bound for the open-ended bin) -> count.
std::map<int64_t, int64_t> histogramBins(const std::string& text) {
    std::map<int64_t, int64_t> bins;
    static const std::regex bin("(le|gt)_([0-9]+)ns:([0-9]+)");
    for (std::sregex_iterator it(text.begin(), text.end(), bin), end; it != end; ++it) {
        int64_t bound = std::stoll((*it)[2]);
        bins[(*it)[1] == "gt" ? -bound : bound] += std::stoll((*it)[3]);
    }
    return bins;
}

constexpr int64_t kStreamRequests = 5000, kStreamBytes = 1'984'000; // rdma_sample.cpp, stream
constexpr int64_t kStreamDelayNs = 100'000;                          // STAND_IN_VERBS_DELAY_US=100

/// Runs a stream mode far beyond the rate: one request per queue and millisecond kept in full.
ProcessResult profileStream(const TempDir& dir, const std::string& mode) {
    return profile(dir, mode, {"STAND_IN_VERBS_DELAY_US=100", "HPCPROF_RDMA_EVENT_RATE=1000"});
}

/// Whole milliseconds from the first request to the last completion on the queue lanes.
int64_t laneSpanMs(const TraceQuery& q) {
    return q.scalar("SELECT (MAX(ts_ns + dur_ns) - MIN(ts_ns)) / 1000000 FROM event_view"
                    " WHERE track_kind = 'nic_queue'");
}

/// Requests and bytes on the queue lanes, full events and aggregates together.
void checkLaneTotals(const TraceQuery& q, int64_t requests, int64_t bytes) {
    CHECK(q.scalar("SELECT SUM(count) FROM event_view WHERE track_kind = 'nic_queue'") == requests);
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE track_kind = 'nic_queue'") == bytes);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_unmatched_completions'") == 0);
}

} // namespace

TEST_CASE("A busy QP's send requests beyond the rate are folded by the agent with exact totals",
          "[rdma]") {
    // The table path (ibv_post_send chains and singles, ibv_poll_cq) and the extended one
    // (ibv_wr_* batches, ibv_start_poll), whose aborted batches must not count.
    for (const char* mode : {"stream", "stream-ex"}) {
        INFO(mode);
        TempDir dir;
        ProcessResult r = profileStream(dir, mode);
        INFO(r.out << r.err);
        REQUIRE(r.exitCode == 0);
        REQUIRE(printed(r.out, "completions") == kStreamRequests);
        REQUIRE(printed(r.out, "bytes") == kStreamBytes);
        TraceQuery q(dir / "trace.hpcprof");

        // Every request is on the QP's lane once, in full or in an aggregate: counts and bytes
        // are exact, and nothing of the aborted batches (SENDs) is there.
        CHECK(q.rows("SELECT name, COUNT(DISTINCT track) FROM event_view WHERE track_kind = 'nic_queue'"
                     " GROUP BY name ORDER BY name") ==
              std::vector<std::string>{"RDMA_WRITE|1", "aggregated work requests|1"});
        checkLaneTotals(q, kStreamRequests, kStreamBytes);
        int64_t aggregated = q.scalar("SELECT SUM(count) FROM event_view WHERE name = 'aggregated work requests'");
        CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_aggregated'") == aggregated);

        // The agent kept at most one request per 1 ms bucket in full, after the first round
        // (5 requests) that it follows before it has seen a completion of its own; the rest
        // never took a record.
        int64_t spanMs = laneSpanMs(q);
        int64_t inAgent = q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_folded_in_agent'");
        CHECK(inAgent <= aggregated);
        CHECK(inAgent >= kStreamRequests - 5 - (spanMs + 2));

        // Every request completed: full ones carry their latency, aggregates count theirs in a
        // histogram whose bins add up, none faster than the stand-in's delay.
        int64_t fullCompleted = q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'RDMA_WRITE'"
                                         " AND dur_ns >= " + std::to_string(atLeast(kStreamDelayNs)));
        CHECK(fullCompleted == q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'RDMA_WRITE'"));
        int64_t aggCompleted = 0;
        for (const std::string& row :
             q.rows("SELECT e.count, (SELECT value FROM event_arg a WHERE a.event_id = e.event_id AND"
                    " a.key = 'completed'), (SELECT value FROM event_arg a WHERE a.event_id = e.event_id"
                    " AND a.key = 'latency_histogram') FROM event_view e"
                    " WHERE e.name = 'aggregated work requests'")) {
            INFO(row);
            auto p1 = row.find('|'), p2 = row.find('|', p1 + 1);
            int64_t completed = std::stoll(row.substr(p1 + 1, p2 - p1 - 1));
            int64_t inBins = 0;
            for (const auto& [bound, n] : histogramBins(row.substr(p2 + 1))) {
                CHECK((bound < 0 || bound >= kStreamDelayNs));
                inBins += n;
            }
            CHECK(inBins == completed);
            aggCompleted += completed;
        }
        CHECK(fullCompleted + aggCompleted == kStreamRequests);

        // The calls stay one event each, with their bytes.
        const char* post = std::string(mode) == "stream" ? "ibv_post_send" : "ibv_wr_complete";
        CHECK(q.rows(std::string("SELECT COUNT(*), SUM(bytes) FROM event_view WHERE name = '") + post + "'") ==
              std::vector<std::string>{"2000|" + std::to_string(kStreamBytes)});

        // The analysis sees every request, folded or not: all under 4 KiB, all posted outside
        // any MPI/NCCL call.
        ProcessResult rep = runProcess({hpcprofBinary(), "report", dir / "trace.hpcprof", "--format",
                                        "json", "-o", dir / "r.json"});
        REQUIRE(rep.exitCode == 0);
        auto doc = nlohmann::json::parse(readWholeFile(dir / "r.json"));
        const auto& rdma = doc["rdma"];
        REQUIRE(rdma["ranks"].size() == 1);
        CHECK(rdma["ranks"][0]["work_requests"] == kStreamRequests);
        CHECK(rdma["ranks"][0]["small_work_requests"] == kStreamRequests);
        CHECK(rdma["ranks"][0]["bytes"] == kStreamBytes);
        REQUIRE(rdma["causes"].size() == 1);
        CHECK(rdma["causes"][0]["call"].is_null());
        CHECK(rdma["causes"][0]["work_requests"] == kStreamRequests);
        CHECK(rdma["causes"][0]["bytes"] == kStreamBytes);
    }
}

TEST_CASE("A busy QP's receives fold with its sends, each queue's completions matched in order",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profileStream(dir, "stream-sends");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    REQUIRE(printed(r.out, "completions") == 2 * kStreamRequests);
    REQUIRE(printed(r.out, "bytes") == 2 * kStreamBytes);
    TraceQuery q(dir / "trace.hpcprof");
    checkLaneTotals(q, 2 * kStreamRequests, 2 * kStreamBytes);
    // Both queues folded in the agent, each at most one request per 1 ms kept in full.
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_folded_in_agent'") >=
          2 * (kStreamRequests - (laneSpanMs(q) + 2)));
    // Every send and receive completed and was timed: in full, or in an aggregate's bins.
    int64_t full = q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('SEND', 'RECV')"
                            " AND dur_ns >= " + std::to_string(atLeast(kStreamDelayNs)));
    CHECK(full == q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('SEND', 'RECV')"));
    int64_t inBins = 0;
    for (const std::string& h : q.rows("SELECT a.value FROM event_arg a JOIN event_view e ON"
                                       " e.event_id = a.event_id WHERE e.name = 'aggregated work"
                                       " requests' AND a.key = 'latency_histogram'"))
        for (const auto& [bound, n] : histogramBins(h)) {
            CHECK((bound < 0 || bound >= kStreamDelayNs));
            inBins += n;
        }
    CHECK(full + inBins == 2 * kStreamRequests);
}

TEST_CASE("Requests folded by a thread whose completions another thread polls are all counted",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profileStream(dir, "stream-split");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    REQUIRE(printed(r.out, "completions") == kStreamRequests);
    TraceQuery q(dir / "trace.hpcprof");
    // The poster folded beyond the rate although it never polls; the poller's completions of
    // folded requests count in the aggregates (without a latency), none is left unmatched.
    checkLaneTotals(q, kStreamRequests, kStreamBytes);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_folded_in_agent'") >=
          kStreamRequests - (laneSpanMs(q) + 2));
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'unmatched completion'") == 0);
    int64_t aggCompleted = q.scalar("SELECT SUM(CAST(a.value AS INTEGER)) FROM event_arg a JOIN event_view e"
                                    " ON e.event_id = a.event_id WHERE e.name = 'aggregated work requests'"
                                    " AND a.key = 'completed'");
    CHECK(aggCompleted + q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'RDMA_WRITE'"
                                  " AND dur_ns >= " + std::to_string(atLeast(kStreamDelayNs))) == kStreamRequests);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'RDMA_WRITE' AND dur_ns = 0") == 0);
}

TEST_CASE("With no rate limit every work request of a busy QP is its own event", "[rdma]") {
    TempDir dir;
    ProcessResult r = profile(dir, "stream", {"STAND_IN_VERBS_DELAY_US=100", "HPCPROF_RDMA_EVENT_RATE=0"});
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes), SUM(dur_ns >= " + std::to_string(atLeast(kStreamDelayNs)) +
                 ") FROM event_view WHERE track_kind = 'nic_queue' GROUP BY name") ==
          std::vector<std::string>{"RDMA_WRITE|5000|1984000|5000"});
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_aggregated'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_work_requests_folded_in_agent'") == 0);
}

TEST_CASE("A context opened where hpcprof did not see it is taken over at its first resource call",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profile(dir, "adopt");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(printed(r.out, "native_ops") == 0);
    CHECK(printed(r.out, "foreign_ops_at_close") == 0);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_contexts_adopted'") == 1);
    CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes) FROM event_view WHERE track_kind = 'nic_queue'"
                 " AND dur_ns > 0 GROUP BY name ORDER BY name") ==
          std::vector<std::string>{"RECV|2|600", "SEND|2|600"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_open_device'") == 0);
}

TEST_CASE("Verbs used only through dlvsym on libibverbs' own handle stay invisible (known blind spot)",
          "[rdma]") {
    TempDir dir;
    ProcessResult r = profile(dir, "bypass");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(printed(r.out, "native_ops") == 1);
    TraceQuery q(dir / "trace.hpcprof");
    // No data path at all (the sample's teardown calls go through the exported symbols and are
    // recorded: only what went through the dlvsym'ed entries and the untouched table is missing).
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('ibv_post_send', 'ibv_post_recv',"
                   " 'ibv_poll_cq', 'ibv_open_device', 'ibv_create_qp') OR category = 'rdma_wr'") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM track WHERE kind = 'nic_queue'") == 0);
}

TEST_CASE("A program that never uses verbs runs and records as before", "[rdma]") {
    TempDir dir, plainDir;
    ProcessResult plain = runProcess({sampleBinary("io_sample"), plainDir.path().string()});
    ProcessResult r = runProcess({hpcprofBinary(), "run", "-o", dir / "trace.hpcprof", "--",
                                  sampleBinary("io_sample"), dir.path().string()});
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.exitCode == plain.exitCode);
    CHECK(r.out == plain.out);
    TraceQuery q(dir / "trace.hpcprof");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE category IN ('rdma', 'rdma_wr')") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM track WHERE kind = 'nic_queue'") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE class = 'io'") > 0);
}

namespace {

/// nic_queue rows of a trace: track, opcode, bytes, completed, and the args that describe the
/// request (wr_id, qp_num, signaled, status, rkey, remote_qpn; not the addresses and times, which
/// differ between runs), one string per work request in lane and post order.
std::vector<std::string> workRequestRows(const TraceQuery& q, const std::string& wrIds) {
    return q.rows("SELECT e.track, e.name, e.bytes, e.dur_ns > 0,"
                  " (SELECT GROUP_CONCAT(key || '=' || value, ',') FROM (SELECT key, value FROM event_arg"
                  "   WHERE event_id = e.event_id AND key IN ('wr_id', 'qp_num', 'signaled', 'status',"
                  "   'rkey', 'remote_qpn') ORDER BY key))"
                  " FROM event_view e JOIN event_arg w ON w.event_id = e.event_id AND w.key = 'wr_id'"
                  " WHERE e.track_kind = 'nic_queue' AND w.value IN (" + wrIds + ")"
                  " ORDER BY e.track, e.ts_ns, w.value");
}

} // namespace

TEST_CASE("Work requests posted and polled through the extended verbs APIs give the same rows as "
          "ibv_post_send and ibv_poll_cq",
          "[rdma]") {
    // Without hpcprof the stand-in's own entries stay in place (what the checks below rely on).
    ProcessResult plain = runProcess({sampleBinary("rdma_sample"), "ex"}, {"STAND_IN_VERBS_DELAY_US=2000"});
    INFO(plain.out << plain.err);
    REQUIRE(plain.exitCode == 0);
    CHECK(printed(plain.out, "native_qp_ex_ops") == 1);
    CHECK(printed(plain.out, "native_cq_ex_ops") == 1);
    CHECK(printed(plain.out, "native_ex_create_ops") == 1);

    TempDir dir, basicDir;
    ProcessResult r = profile(dir, "ex", {"OMPI_COMM_WORLD_RANK=3"});
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(printed(r.out, "native_ex_create_ops") == 0); // the context's ex create entries,
    CHECK(printed(r.out, "native_qp_ex_ops") == 0);     // the QP's ibv_wr_* entries and
    CHECK(printed(r.out, "native_cq_ex_ops") == 0);     // the CQ's poll entries were wrapped,
    CHECK(printed(r.out, "foreign_ex_ops_at_destroy") == 0); // and given back before destroy
    CHECK(printed(r.out, "foreign_ops_at_close") == 0);      // and close
    const int64_t qpA = printed(r.out, "qp_a");
    const int64_t empty = printed(r.out, "empty_polls_a") + printed(r.out, "empty_polls_b");
    TraceQuery q(dir / "trace.hpcprof");

    // One event per batch, named ibv_wr_complete, bytes = the batch's sg/inline total; the
    // refused batch (bytes NULL, its error in `result`) and the aborted one post nothing.
    CHECK(printed(r.out, "early_batch_rc") == EINVAL);
    CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes) FROM event_view WHERE category = 'rdma'"
                 " AND name IN ('ibv_wr_complete', 'ibv_wr_abort', 'ibv_post_recv', 'ibv_post_send')"
                 " GROUP BY name ORDER BY name") ==
          std::vector<std::string>{"ibv_post_recv|1|3000", "ibv_wr_abort|1|", "ibv_wr_complete|5|8000"});
    CHECK(q.rows("SELECT a.value, e.peer, e.bytes FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_wr_complete' AND a.key = 'work_requests' ORDER BY e.ts_ns") ==
          std::vector<std::string>{"0|3|", "2|3|3000", "2|3|4608", "2|3|264", "1|3|128"});
    CHECK(q.text("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_wr_complete' AND a.key = 'result'") == std::to_string(EINVAL));
    CHECK(q.scalar("SELECT COUNT(*) FROM event_arg WHERE key = 'wr_id' AND value = 8") == 0);
    CHECK(q.rows("SELECT a.key, a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name IN ('ibv_wr_complete', 'ibv_wr_abort') AND a.key = 'qp_num'") ==
          std::vector<std::string>(6, "qp_num|" + std::to_string(qpA)));
    CHECK(q.text("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_wr_abort' AND a.key = 'discarded_work_requests'") == "1");

    // The work requests, on QP A's lane; wr 6 (aborted) is nowhere.
    CHECK(q.rows("SELECT name, bytes, dur_ns > 0 FROM event_view WHERE track = 'standin0 QP " +
                 std::to_string(qpA) + "' ORDER BY ts_ns, event_id") ==
          std::vector<std::string>{"SEND|1000|1", "SEND|2000|1", "RDMA_WRITE|4096|1",
                                   "RDMA_WRITE|512|0", "RDMA_READ|256|1", "ATOMIC_FETCH_AND_ADD|8|1",
                                   "RDMA_WRITE|128|1"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_arg WHERE key = 'wr_id' AND value = 6") == 0);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                   " WHERE e.track_kind = 'nic_queue' AND a.key = 'rkey'") == 5); // writes, read, atomic

    // Exactly the rows basic (the same requests through ibv_post_send / ibv_poll_cq) gives.
    ProcessResult b = profile(basicDir, "basic", {"OMPI_COMM_WORLD_RANK=3"});
    REQUIRE(b.exitCode == 0);
    TraceQuery qb(basicDir / "trace.hpcprof");
    const std::string shared = "1, 2, 3, 4, 101, 102";
    auto exRows = workRequestRows(q, shared);
    CHECK(exRows.size() == 6);
    CHECK(exRows == workRequestRows(qb, shared));
    CHECK(q.rows("SELECT ts_ns IS NOT NULL, peer FROM event_view WHERE track_kind = 'nic_queue'"
                 " GROUP BY 2") == std::vector<std::string>{"1|3"});

    // Polls: one ibv_start_poll event per start..end, with its completions' bytes; empty
    // starts (ENOENT) fold with a count.
    CHECK(q.scalar("SELECT SUM(bytes) FROM event_view WHERE name = 'ibv_start_poll' AND bytes IS NOT NULL") ==
          1000 + 2000 + 4096 + 256 + 8 + 128 + 1000 + 2000);
    CHECK(q.scalar("SELECT SUM(a.value) FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                   " WHERE e.name = 'ibv_start_poll' AND a.key = 'completions'") == 8);
    CHECK(q.scalar("SELECT SUM(count) FROM event_view WHERE name = 'ibv_start_poll' AND bytes IS NULL") ==
          empty);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_poll_cq'") == 0);

    // Post-to-completion: from the start of the batch (ibv_wr_start) to the ibv_next_poll /
    // ibv_start_poll that returned the completion, inside its ibv_start_poll event.
    int checked = 0;
    for (const CompletedRequest& c : completedRequests(q)) {
        INFO("event " << c.id);
        const int64_t ts = c.ts, end = c.end;
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('ibv_wr_complete', 'ibv_post_recv')"
                       " AND ts_ns = " + std::to_string(ts)) == 1);
        CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_start_poll' AND bytes IS NOT NULL"
                       " AND ts_ns <= " + std::to_string(end) + " AND ts_ns + dur_ns + 1 >= " +
                       std::to_string(end)) == 1);
        ++checked;
    }
    CHECK(checked == 8);

    // Resources: the ex creates are recorded like their plain forms.
    CHECK(q.rows("SELECT a.key, a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_create_qp_ex' AND a.key IN ('qp_type', 'max_send_wr', 'qp_num')"
                 " ORDER BY a.key") ==
          std::vector<std::string>{"max_send_wr|64", "qp_num|" + std::to_string(qpA), "qp_type|RC"});
    CHECK(q.rows("SELECT a.value FROM event_arg a JOIN event_view e ON e.event_id = a.event_id"
                 " WHERE e.name = 'ibv_create_cq_ex' AND a.key = 'cqe'") ==
          std::vector<std::string>{"64", "64"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'ibv_destroy_cq'") == 2);
    // Completions of the CQ that did not ask for QP numbers still pair (hpcprof asked for them).
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_unmatched_completions'") == 0);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'rdma_ex_objects_untracked'") == 0);
}

TEST_CASE("A rank polling a CQ that never completes is shown polling since its first empty poll "
          "after the last completion",
          "[rdma][hang]") {
    TempDir dir;
    const std::string path = dir / "trace.hpcprof";
    // The write completes 2 ms after its post: the polls before it are empty, then it clears the
    // polling state; the receive posted after never completes.
    ProcessResult run;
    std::thread job([&] {
        run = runProcess({hpcprofBinary(), "run", "--timeout", "6s", "-o", path, "--",
                          sampleBinary("rdma_sample"), "starve"},
                         {"STAND_IN_VERBS_DELAY_US=2000", "RANK=0", "WORLD_SIZE=1"});
    });
    // While it runs, hpcprof status shows the polling state (not a call).
    nlohmann::json live;
    for (int i = 0; i < 50; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto st = runProcess({hpcprofBinary(), "status", path + ".raw", "--json"});
        live = nlohmann::json::parse(st.out, nullptr, false);
        if (live.is_array() && live.size() == 1 && live[0]["calls"].size() == 1 &&
            live[0]["calls"][0]["polling"] == true)
            break;
    }
    job.join();
    INFO(run.out << run.err << live.dump(2));
    REQUIRE(live.is_array());
    REQUIRE(live.size() == 1);
    REQUIRE(live[0]["calls"].size() == 1);
    CHECK(live[0]["calls"][0]["call"] == "ibv_poll_cq");
    CHECK(live[0]["calls"][0]["polling"] == true);
    CHECK(run.err.find("time limit reached") != std::string::npos);
    REQUIRE(run.out.find("starving") != std::string::npos);
    auto rep = runProcess({hpcprofBinary(), "report", path, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    auto doc = nlohmann::json::parse(rep.out);
    REQUIRE(doc.contains("hang"));
    INFO(doc["hang"].dump(2));
    const auto& rank = doc["hang"]["ranks"][0];
    REQUIRE(rank["unfinished_calls"].size() == 1);
    const auto& call = rank["unfinished_calls"][0];
    CHECK(call["call"] == "ibv_poll_cq");
    CHECK(rank["state"] == "polling an RDMA completion queue (ibv_poll_cq) that gave no "
                           "completion since its first empty poll");
    TraceQuery q(path);
    // The poll that returned the write's completion (2048 bytes) ended before the wait began;
    // the empty polls before the completion (1000, then those of the 2 ms) did not hold it.
    int64_t completed = q.scalar("SELECT ts_ns + dur_ns FROM event_view WHERE name = 'ibv_poll_cq'"
                                 " AND bytes = 2048");
    REQUIRE(completed > 0);
    CHECK(call["since_ns"].get<int64_t>() >= completed);
    CHECK(q.scalar("SELECT MIN(ts_ns) FROM event_view WHERE name = 'ibv_poll_cq'") < completed);
    CHECK(q.scalar("SELECT COUNT(*) FROM event_unfinished") == 1);
}
