// SPDX-License-Identifier: MIT
// Counter analysis and the counter advice rules on hand-made traces (counter rows added to a
// TraceBuilder trace), and the counterSeries query the GUI uses.
#include <catch2/catch.hpp>

#include <functional>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/counters.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

struct ThreadCounters {
    int64_t tid;
    /// (name, running totals at 0, 250, 500, 750, 1000 ms)
    std::vector<std::pair<std::string, std::vector<double>>> series;
};

constexpr int64_t kMs = 1'000'000;

/// `ranks` ranks on one host (node0) with `cpus` CPUs, each with the given main-thread counters.
std::string buildTrace(const test::TempDir& dir, int ranks, int cpus,
                       const std::function<ThreadCounters(int)>& counters,
                       const std::function<void(test::TraceBuilder&, int, int)>& events = {}) {
    test::TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        int t = b.rank(r, 0, 1000 * kMs, ranks);
        if (events) events(b, t, r);
    }
    b.setMetadata("counters", "{\"period_ns\":10000000,\"available\":[],\"unavailable\":[{\"counter\":"
                              "\"PAPI_TOT_INS\",\"reason\":\"no PMU\",\"processes\":1}],\"hosts\":[{\"host\":"
                              "\"node0\",\"online_cpus\":" + std::to_string(cpus) + ",\"affinity_cpus\":" +
                                  std::to_string(cpus) + "}]}");
    std::string path = dir / "t.hpcprof";
    b.write(path);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    schema::DbHandle h(db);
    for (int r = 0; r < ranks; ++r) {
        ThreadCounters tc = counters(r);
        for (const auto& [name, values] : tc.series) {
            schema::Statement t(db, "INSERT INTO counter_track(process_id, thread_id, name, unit)"
                                    " SELECT th.process_id, th.id, ?, 'ns' FROM thread th WHERE th.tid = ?");
            t.bind(1, std::string_view(name));
            t.bind(2, tc.tid);
            REQUIRE(t.run().ok());
            int64_t id = sqlite3_last_insert_rowid(db);
            for (size_t i = 0; i < values.size(); ++i) {
                schema::Statement c(db, "INSERT INTO counter(counter_track_id, ts, value) VALUES(?,?,?)");
                c.bind(1, id);
                c.bind(2, int64_t(i) * 250 * kMs);
                c.bind(3, values[i]);
                REQUIRE(c.run().ok());
            }
        }
    }
    return path;
}

Analysis analyse(const std::string& path) { return test::analyseFile(path); }
const Finding* find(const Analysis& a, const std::string& id) { return test::findFinding(a, id); }
double evidence(const Finding& f, const std::string& key) { return test::findingEvidence(f, key); }

/// A rank that got `use` of a CPU and waited `wait` of the time, evenly over 1 s.
ThreadCounters evenly(int rank, double use, double wait, double involuntaryPerS = 0) {
    auto ramp = [](double perS) {
        std::vector<double> v;
        for (int i = 0; i <= 4; ++i) v.push_back(perS * 0.25 * i);
        return v;
    };
    return {1000 + rank,
            {{"task_clock", ramp(use * 1e9)}, {"cpu_wait", ramp(wait * 1e9)},
             {"involuntary_context_switches", ramp(involuntaryPerS)}, {"voluntary_context_switches", ramp(0)}}};
}

} // namespace

TEST_CASE("four busy ranks on two CPUs fire oversubscription, two do not", "[counters][analyzer][advice]") {
    test::TempDir dir;
    // 4 ranks sharing 2 CPUs (the builder puts ranks 0-3 on node0): each runs half the time.
    Analysis six = analyse(buildTrace(dir, 4, 2, [](int r) { return evenly(r, 0.5, 0.5, 300); }));
    REQUIRE(six.counters.present);
    REQUIRE(six.counters.hosts.size() == 1);
    CHECK(six.counters.hosts[0].busyThreads == 4);
    CHECK(six.counters.hosts[0].cpus == 2);
    REQUIRE(six.counters.ranks.size() == 4);
    CHECK(six.counters.ranks[0].utilization == Approx(0.5));
    CHECK(six.counters.ranks[0].cpuWaitFraction == Approx(0.5));
    CHECK(six.counters.ranks[0].involuntaryPerS == Approx(300));
    const Finding* f = find(six, "oversubscription");
    REQUIRE(f);
    CHECK(evidence(*f, "busy_threads") == 4);
    CHECK(evidence(*f, "cpus") == 2);
    CHECK(evidence(*f, "cpu_wait_pct") == Approx(50));
    CHECK(f->ranks == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(f->estimatedGainNs == Approx(1000 * kMs * 0.5).epsilon(0.01));
    CHECK_FALSE(find(six, "shared-cores")); // the oversubscription finding says it

    test::TempDir dir2;
    Analysis two = analyse(buildTrace(dir2, 2, 2, [](int r) { return evenly(r, 0.95, 0.02); }));
    CHECK(two.counters.hosts[0].busyThreads == 2);
    CHECK_FALSE(find(two, "oversubscription"));
    CHECK_FALSE(find(two, "shared-cores"));
    CHECK(two.counters.counters.size() == 1);
    CHECK_FALSE(two.counters.counters[0].available);
    CHECK(two.counters.counters[0].reason == "no PMU");
}

TEST_CASE("a short-lived thread that waited for a CPU does not make a host oversubscribed",
          "[counters][analyzer][advice]") {
    test::TempDir dir;
    // Two ranks on two CPUs, each using its CPU; each also had a start-up helper that lived 50
    // of the run's 1000 ms and spent them waiting for a CPU (a loaded machine).
    auto path = buildTrace(dir, 2, 2, [](int r) { return evenly(r, 0.95, 0.02); },
                           [](test::TraceBuilder& b, int track, int r) { b.thread(track, 2000 + r); });
    {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        schema::DbHandle h(db);
        for (int r = 0; r < 2; ++r)
            for (const auto& [name, end] : {std::pair<const char*, double>{"task_clock", 5e6}, {"cpu_wait", 45e6}}) {
                schema::Statement t(db, "INSERT INTO counter_track(process_id, thread_id, name, unit)"
                                        " SELECT th.process_id, th.id, ?, 'ns' FROM thread th WHERE th.tid = ?");
                t.bind(1, std::string_view(name));
                t.bind(2, int64_t(2000 + r));
                REQUIRE(t.run().ok());
                int64_t id = sqlite3_last_insert_rowid(db);
                for (auto [ts, v] : {std::pair<int64_t, double>{10 * kMs, 0}, {60 * kMs, end}}) {
                    schema::Statement c(db, "INSERT INTO counter(counter_track_id, ts, value) VALUES(?,?,?)");
                    c.bind(1, id);
                    c.bind(2, ts);
                    c.bind(3, v);
                    REQUIRE(c.run().ok());
                }
            }
    }
    Analysis a = analyse(path);
    REQUIRE(a.counters.hosts.size() == 1);
    CHECK(a.counters.hosts[0].threads == 4);
    CHECK(a.counters.hosts[0].busyThreads == 2);
    CHECK_FALSE(find(a, "oversubscription"));
}

TEST_CASE("a rank waiting for its core in compute fires shared-cores", "[counters][analyzer][advice]") {
    test::TempDir dir;
    // Rank 1 waits 40 % of its compute time; it sits in MPI for [500, 750) ms, which does not count.
    auto path = buildTrace(
        dir, 2, 4, [](int r) { return r == 1 ? evenly(r, 0.6, 0.4) : evenly(r, 0.98, 0.01); },
        [](test::TraceBuilder& b, int t, int) {
            b.event(t, Category::MpiCollective, "MPI_Allreduce", 500 * kMs, 250 * kMs).collective("w", 2, 0);
        });
    Analysis a = analyse(path);
    const RankCounters& r1 = a.counters.ranks[1];
    CHECK(r1.computeNs == 750 * kMs);
    CHECK(r1.computeWaitFraction == Approx(0.4));
    CHECK(r1.computeUtilization == Approx(0.6));
    const Finding* f = find(a, "shared-cores");
    REQUIRE(f);
    CHECK(f->ranks == std::vector<int64_t>{1});
    CHECK(evidence(*f, "max_compute_cpu_wait_pct") == Approx(40));
    // Its wait in the call (40 % of the 250 ms transfer) is the shared core's too.
    CHECK(r1.callsWaitFraction == Approx(0.4));
    CHECK(f->estimatedGainNs == Approx(0.4 * 750 * kMs + 0.4 * 250 * kMs).epsilon(0.001));
    CHECK_FALSE(find(a, "oversubscription"));
}

TEST_CASE("on an oversubscribed host a polling call's wait for a core is oversubscription's, not "
          "exposed communication's", "[counters][analyzer][advice]") {
    test::TempDir dir;
    // 4 ranks on 2 CPUs, each half the time waiting for one, in compute and in the Allreduce
    // they all enter at 500 ms and leave at 750 ms (no wait for a late partner: 250 ms transfer).
    auto path = buildTrace(
        dir, 4, 2, [](int r) { return evenly(r, 0.5, 0.5, 300); },
        [](test::TraceBuilder& b, int t, int) {
            b.event(t, Category::MpiCollective, "MPI_Allreduce", 500 * kMs, 250 * kMs).collective("w", 4, 0);
        });
    Analysis a = analyse(path);
    REQUIRE(a.counters.ranks.size() == 4);
    CHECK(a.counters.ranks[2].callsWaitFraction == Approx(0.5));
    CHECK(a.counters.ranks[2].computeWaitFraction == Approx(0.5));
    const Finding* over = find(a, "oversubscription");
    const Finding* exposed = find(a, "exposed-communication");
    REQUIRE(over);
    REQUIRE(exposed);
    // Half of the 750 ms compute and half of the 250 ms transfer were waits for a core.
    CHECK(over->exclusiveGainNs == Approx(0.5 * 750 * kMs + 0.5 * 250 * kMs).epsilon(0.01));
    // Overlap could hide only the transfer that ran on a CPU.
    CHECK(exposed->exclusiveGainNs == Approx(0.5 * 250 * kMs).epsilon(0.01));
}

TEST_CASE("low instructions per cycle in compute fires low-ipc", "[counters][analyzer][advice]") {
    auto withIpc = [](double ipc) {
        return [ipc](int r) {
            ThreadCounters t = evenly(r, 1.0, 0.0);
            t.series.push_back({"PAPI_TOT_CYC", {0, 5e8, 1e9, 1.5e9, 2e9}});
            t.series.push_back({"PAPI_TOT_INS", {0, 5e8 * ipc, 1e9 * ipc, 1.5e9 * ipc, 2e9 * ipc}});
            return t;
        };
    };
    test::TempDir dir;
    Analysis low = analyse(buildTrace(dir, 1, 4, withIpc(0.3)));
    CHECK(low.counters.ranks[0].ipc == Approx(0.3));
    CHECK(low.counters.ranks[0].computeIpc == Approx(0.3));
    const Finding* f = find(low, "low-ipc");
    REQUIRE(f);
    CHECK(evidence(*f, "min_compute_ipc") == Approx(0.3));
    CHECK(f->estimatedGainNs == Approx(0.7 * 1000 * kMs).epsilon(0.001));
    test::TempDir dir2;
    CHECK_FALSE(find(analyse(buildTrace(dir2, 1, 4, withIpc(1.5))), "low-ipc"));
    test::TempDir dir3; // no PAPI counters at all: the rule stays silent
    CHECK_FALSE(find(analyse(buildTrace(dir3, 1, 4, [](int r) { return evenly(r, 1.0, 0.0); })), "low-ipc"));
}

TEST_CASE("counterSeries returns the window, the sample before it, and thins to the resolution",
          "[counters][analyzer][query]") {
    test::TempDir dir;
    auto path = buildTrace(dir, 1, 2, [](int r) { return evenly(r, 1.0, 0.0); });
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto tracks = counterTracks(*trace);
    REQUIRE(tracks.ok());
    REQUIRE(tracks->size() == 4);
    const CounterTrackInfo* clock = nullptr;
    for (const auto& t : *tracks)
        if (t.name == "task_clock") clock = &t;
    REQUIRE(clock);
    CHECK(clock->rank == 0);
    CHECK(clock->tid == 1000);
    CHECK(clock->samples == 5);
    auto all = counterSeries(*trace, clock->id, 300 * kMs, 1001 * kMs, 0);
    REQUIRE(all.ok());
    REQUIRE(all->size() == 4); // 250 (before the window), 500, 750, 1000
    CHECK((*all)[0].ts == 250 * kMs);
    CHECK((*all)[3].value == Approx(1e9));
    auto thin = counterSeries(*trace, clock->id, 0, 1001 * kMs, 600 * kMs);
    REQUIRE(thin.ok());
    REQUIRE(thin->size() == 2); // last of [0, 600) = 500 ms, last of [600, 1200) = 1000 ms
    CHECK((*thin)[0].ts == 500 * kMs);
    CHECK((*thin)[1].ts == 1000 * kMs);
    auto rate = ratePerSecond(*thin);
    REQUIRE(rate.size() == 1);
    CHECK(rate[0].value == Approx(1e9)); // 1 s of CPU per second
}

TEST_CASE("counterChart keeps the largest rate per bucket, or the largest level of a ratio track",
          "[counters][analyzer][query]") {
    test::TempDir dir;
    // Running total at 0, 250, 500, 750, 1000 ms: rates 0.2, 0.8, 0.4, 1.0 s/s.
    auto path = buildTrace(dir, 1, 2, [](int) {
        return ThreadCounters{1000, {{"task_clock", {0, 50e6, 250e6, 350e6, 600e6}}}};
    });
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto tracks = counterTracks(*trace);
    REQUIRE(tracks.ok());
    REQUIRE(tracks->size() == 1);
    int64_t id = (*tracks)[0].id;
    // 600 ms buckets: [0, 600) holds the rates starting at 0, 250 and 500 ms; [600, 1200) the one at 750.
    auto chart = counterChart(*trace, id, false, 0, 1000 * kMs, 600 * kMs);
    REQUIRE(chart.ok());
    REQUIRE(chart->size() == 2);
    CHECK((*chart)[0].ts == 0);
    CHECK((*chart)[0].value == Approx(0.8e9));
    CHECK((*chart)[1].ts == 600 * kMs);
    CHECK((*chart)[1].value == Approx(1.0e9));
    // Fine buckets: one rate each, starting where its interval starts.
    auto fine = counterChart(*trace, id, false, 0, 1000 * kMs, 250 * kMs);
    REQUIRE(fine.ok());
    REQUIRE(fine->size() == 4);
    CHECK((*fine)[2].ts == 500 * kMs);
    CHECK((*fine)[2].value == Approx(0.4e9));
    // The same samples read as levels (a ratio track): the largest value per bucket.
    auto levels = counterChart(*trace, id, true, 0, 1000 * kMs, 600 * kMs);
    REQUIRE(levels.ok());
    REQUIRE(levels->size() == 2);
    CHECK((*levels)[0].value == Approx(250e6));
    CHECK((*levels)[1].value == Approx(600e6));
    // A window that holds none of the samples, beyond the margin bucket: nothing to draw.
    auto empty = counterChart(*trace, id, false, 2000 * kMs, 3000 * kMs, 100 * kMs);
    REQUIRE(empty.ok());
    CHECK(empty->empty());
}

TEST_CASE("chartFromSamples merges sub-millisecond intervals and caps a thread's CPU time at one CPU",
          "[counters][analyzer]") {
    // A boundary sample 0.84 ms after a timer sample that read its clock late: 4.8 ms of CPU in
    // 0.84 ms (5.7 CPUs) on its own; merged with the next interval, 9 ms of CPU in 10 ms.
    const int64_t kUs = 1000;
    std::vector<CounterPoint> s = {{0, 0}, {10'000 * kUs, 5e6}, {10'840 * kUs, 9.8e6}, {20'000 * kUs, 14e6}};
    ChartOptions o;
    o.resolutionNs = 5'000 * kUs;
    auto chart = chartFromSamples(s, o);
    REQUIRE(chart.size() == 2);
    CHECK(chart[0].ts == 0);
    CHECK(chart[0].value == Approx(0.5e9));
    CHECK(chart[1].ts == 10'000 * kUs);
    CHECK(chart[1].value == Approx(0.9e9)); // (14 - 5) ms over (20 - 10) ms
    for (const auto& p : chart) CHECK(p.value <= 1e9);
    // The cap: a jump that no merging absorbs stays at one CPU-second per second.
    o.maxRate = 1e9;
    auto capped = chartFromSamples({{0, 0}, {2'000 * kUs, 6e6}}, o);
    REQUIRE(capped.size() == 1);
    CHECK(capped[0].value == Approx(1e9));
    // Without merging (the old arithmetic) the same samples read 5.7 CPUs.
    o.maxRate = 0;
    o.minIntervalNs = 0;
    auto raw = chartFromSamples(s, o);
    REQUIRE(raw.size() == 2);
    CHECK(raw[1].value == Approx(4.8e6 * 1e9 / 840e3));
}

TEST_CASE("chartFromSamples moves what an interval has beyond one CPU back into the intervals it was late for",
          "[counters][analyzer]") {
    // cpu_wait grows only when the thread next runs: 14 ms of wait read in the third 10 ms
    // interval, 2 ms in each of the two before. Capped at one CPU, its 4 ms beyond the cap go
    // into the second interval; the total (18 ms) is kept.
    const int64_t kMs = 1'000'000;
    ChartOptions o;
    o.resolutionNs = 10 * kMs;
    o.maxRate = 1e9;
    auto one = chartFromSamples({{0, 0}, {10 * kMs, 2e6}, {20 * kMs, 4e6}, {30 * kMs, 18e6}}, o);
    REQUIRE(one.size() == 3);
    CHECK(one[0].value == Approx(0.2e9));
    CHECK(one[1].value == Approx(0.6e9));
    CHECK(one[2].value == Approx(1e9));
    // 20 ms read at once: 10 ms beyond the cap fill the second interval (8 ms of room), the
    // first takes the last 2 ms.
    auto spill = chartFromSamples({{0, 0}, {10 * kMs, 2e6}, {20 * kMs, 4e6}, {30 * kMs, 24e6}}, o);
    REQUIRE(spill.size() == 3);
    CHECK(spill[0].value == Approx(0.4e9));
    CHECK(spill[1].value == Approx(1e9));
    CHECK(spill[2].value == Approx(1e9));
    // No earlier room: clipped at the cap (the first interval has nothing before it).
    auto first = chartFromSamples({{0, 0}, {10 * kMs, 15e6}, {20 * kMs, 16e6}}, o);
    REQUIRE(first.size() == 2);
    CHECK(first[0].value == Approx(1e9));
    CHECK(first[1].value == Approx(0.1e9));
    // A total that falls (two readings of one clock out of order) draws no growth, never a
    // negative rate.
    auto fall = chartFromSamples({{0, 0}, {10 * kMs, 5e6}, {20 * kMs, 4.9e6}, {30 * kMs, 8e6}}, o);
    REQUIRE(fall.size() == 3);
    CHECK(fall[0].value == Approx(0.5e9));
    CHECK(fall[1].value == 0);
    CHECK(fall[2].value == Approx(0.31e9));
}
