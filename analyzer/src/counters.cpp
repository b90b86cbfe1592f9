// SPDX-License-Identifier: MIT
// CPU-counter analysis (docs/counters.md): reads each thread's counter samples inside the window,
// takes deltas of the running totals, splits the main thread's deltas into the compute phase
// (outside recorded calls) and the rest in proportion to time, and counts busy threads per host.
#include "hpcprof/analyzer/counters.hpp"
#include "thresholds.hpp"
#include "trace_access.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/advice.hpp"

namespace hpcprof::analyzer {

namespace {

using Series = std::vector<CounterPoint>;

using threshold::kBusyDemand;
using threshold::kBusyInvoluntaryPerS;
using threshold::kMinBusySpanNs;
using threshold::kMinBusySpanShare;

struct ThreadSeries {
    int64_t processId = 0, tid = 0;
    std::map<std::string, Series> byName;
    const Series* get(const char* n) const {
        auto it = byName.find(n);
        return it == byName.end() || it->second.size() < 2 ? nullptr : &it->second;
    }
    double delta(const char* n) const {
        const Series* s = get(n);
        return s ? s->back().value - s->front().value : -1;
    }
    int64_t span() const {
        int64_t best = 0;
        for (const auto& [n, s] : byName)
            if (s.size() >= 2) best = std::max(best, s.back().ts - s.front().ts);
        return best;
    }
};

double perSecond(double delta, int64_t spanNs) { return delta >= 0 && spanNs > 0 ? delta * 1e9 / double(spanNs) : -1; }
double ratioOf(double a, double b) { return a >= 0 && b > 0 ? a / b : -1; }

/// `processSpan`: the longest span of a thread of the same process.
bool isBusy(const ThreadSeries& t, int64_t processSpan) {
    int64_t span = t.span();
    if (span < kMinBusySpanNs || double(span) < kMinBusySpanShare * double(processSpan)) return false;
    double task = t.delta("task_clock"), wait = t.delta("cpu_wait");
    if (task >= 0 && wait >= 0) return (task + wait) / double(span) >= kBusyDemand;
    if (task >= 0 && task / double(span) >= kBusyDemand) return true;
    double vol = t.delta("voluntary_context_switches"), inv = t.delta("involuntary_context_switches");
    return inv >= 0 && vol >= 0 && inv >= vol && perSecond(inv, span) >= kBusyInvoluntaryPerS;
}

/// Sorted, merged [begin, end) intervals of the main thread's recorded calls.
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

Intervals callIntervals(const Trace& trace, int64_t processId, int64_t tid, int64_t t0, int64_t t1) {
    Intervals out;
    schema::Statement s(detail::db(trace),
                        "SELECT e.ts, e.ts + e.dur FROM track t JOIN thread th ON th.id = t.thread_id"
                        " JOIN event e ON e.id BETWEEN t.first_event_id AND t.last_event_id"
                        " JOIN category c ON c.id = e.category_id"
                        " WHERE t.process_id = ? AND th.tid = ? AND t.kind = 'cpu_thread'"
                        " AND e.depth = 0 AND c.class NOT IN ('compute', 'annotation')"
                        " AND e.ts < ? AND e.ts + e.dur > ? ORDER BY e.ts");
    s.bind(1, processId);
    s.bind(2, tid);
    s.bind(3, t1);
    s.bind(4, t0);
    while (s.step()) {
        int64_t b = s.int64(0), e = s.int64(1);
        if (!out.empty() && b <= out.back().second)
            out.back().second = std::max(out.back().second, e);
        else
            out.push_back({b, e});
    }
    return out;
}

/// Share of [a, b) outside the intervals; `cursor` advances monotonically (samples are sorted).
double outsideShare(const Intervals& iv, size_t& cursor, int64_t a, int64_t b) {
    if (b <= a) return 0;
    while (cursor < iv.size() && iv[cursor].second <= a) ++cursor;
    int64_t inside = 0;
    for (size_t i = cursor; i < iv.size() && iv[i].first < b; ++i)
        inside += std::min(b, iv[i].second) - std::max(a, iv[i].first);
    return 1.0 - double(inside) / double(b - a);
}

/// Sum of the deltas of `s` weighted by the share of each interval outside the calls.
double computeDelta(const Series* s, const Intervals& iv) {
    if (!s) return -1;
    double sum = 0;
    size_t cursor = 0;
    for (size_t i = 1; i < s->size(); ++i)
        sum += ((*s)[i].value - (*s)[i - 1].value) * outsideShare(iv, cursor, (*s)[i - 1].ts, (*s)[i].ts);
    return sum;
}

void readAvailability(const Trace& trace, CounterAnalysis& out, std::map<std::string, int64_t>& cpus) {
    std::string doc = trace.metadata("counters");
    if (doc.empty()) return;
    auto j = nlohmann::json::parse(doc, nullptr, false);
    if (j.is_discarded()) return;
    for (const auto& c : j.value("available", nlohmann::json::array()))
        out.counters.push_back({c.value("counter", ""), c.value("source", ""), c.value("note", ""), true});
    for (const auto& c : j.value("unavailable", nlohmann::json::array()))
        out.counters.push_back({c.value("counter", ""), "", c.value("reason", ""), false});
    for (const auto& h : j.value("hosts", nlohmann::json::array()))
        cpus[h.value("host", "")] = h.value("online_cpus", int64_t(0));
}

/// Running total at `t`, interpolated between samples; -1 outside the sampled span.
double valueAt(const Series& s, int64_t t) {
    if (s.empty() || t < s.front().ts || t > s.back().ts) return -1;
    auto it = std::lower_bound(s.begin(), s.end(), t, [](const CounterPoint& p, int64_t x) { return p.ts < x; });
    if (it->ts == t || it == s.begin()) return it->value;
    const CounterPoint& a = *(it - 1);
    return a.value + (it->value - a.value) * double(t - a.ts) / double(it->ts - a.ts);
}

/// Per-bucket rate of a ns running total (a share of wall time), -1 where not sampled.
std::vector<float> overview(const Series* s, int64_t t0, int64_t t1, size_t buckets) {
    std::vector<float> out(buckets, -1.0f);
    if (!s || buckets == 0 || t1 <= t0) return out;
    for (size_t b = 0; b < buckets; ++b) {
        int64_t a = t0 + int64_t(double(t1 - t0) * double(b) / double(buckets));
        int64_t e = t0 + int64_t(double(t1 - t0) * double(b + 1) / double(buckets));
        double va = valueAt(*s, a), ve = valueAt(*s, e);
        if (va >= 0 && ve >= 0 && e > a) out[b] = float(std::clamp((ve - va) / double(e - a), 0.0, 1.0));
    }
    return out;
}

struct Proc {
    std::optional<int64_t> rank;
    std::string host;
    int64_t pid = 0;
};
using ThreadKey = std::pair<int64_t, int64_t>; ///< process id, tid
using ThreadMap = std::map<ThreadKey, ThreadSeries>;

std::map<int64_t, Proc> readProcesses(const Trace& trace) {
    std::map<int64_t, Proc> procs;
    schema::Statement s(detail::db(trace), "SELECT id, rank, host, pid FROM process");
    while (s.step())
        procs[s.int64(0)] = {s.isNull(1) ? std::nullopt : std::optional<int64_t>(s.int64(1)), s.text(2), s.int64(3)};
    return procs;
}

/// Every thread's counter series inside [t0, t1] (plus the sample just before it, for deltas).
ThreadMap readThreadSeries(const Trace& trace, int64_t t0, int64_t t1) {
    ThreadMap threads;
    schema::Statement tracks(detail::db(trace), "SELECT ct.id, ct.process_id, th.tid, ct.name FROM counter_track ct"
                                                " JOIN thread th ON th.id = ct.thread_id WHERE ct.unit != 'ratio'");
    while (tracks.step()) {
        ThreadSeries& t = threads[{tracks.int64(1), tracks.int64(2)}];
        t.processId = tracks.int64(1);
        t.tid = tracks.int64(2);
        auto series = counterSeries(trace, tracks.int64(0), t0, t1 + 1, 0);
        if (series.ok()) t.byName[tracks.text(3)] = std::move(series.value());
    }
    return threads;
}

/// The longest sampled span of any thread, per process (isBusy's reference).
std::map<int64_t, int64_t> longestSpanPerProcess(const ThreadMap& threads) {
    std::map<int64_t, int64_t> span;
    for (const auto& [key, t] : threads) span[t.processId] = std::max(span[t.processId], t.span());
    return span;
}

/// Rates over the main thread's whole sampled span.
void fillRates(RankCounters& r, const ThreadSeries& main) {
    int64_t span = main.span();
    r.spanNs = span;
    r.utilization = ratioOf(main.delta("task_clock"), double(span));
    r.cpuWaitFraction = ratioOf(main.delta("cpu_wait"), double(span));
    r.voluntaryPerS = perSecond(main.delta("voluntary_context_switches"), span);
    r.involuntaryPerS = perSecond(main.delta("involuntary_context_switches"), span);
    r.contextSwitchesPerS = perSecond(main.delta("context_switches"), span);
    r.migrationsPerS = perSecond(main.delta("cpu_migrations"), span);
    r.pageFaultsPerS = perSecond(main.delta("page_faults"), span);
    double ins = main.delta("PAPI_TOT_INS");
    r.ipc = ratioOf(ins, main.delta("PAPI_TOT_CYC"));
    double cm = main.delta("PAPI_L3_TCM") >= 0 ? main.delta("PAPI_L3_TCM") : main.delta("PAPI_L2_TCM");
    r.cacheMissesPerKInstr = cm >= 0 && ins > 0 ? 1000.0 * cm / ins : -1;
    double bm = main.delta("PAPI_BR_MSP");
    r.branchMissesPerKInstr = bm >= 0 && ins > 0 ? 1000.0 * bm / ins : -1;
}

/// The compute phase: each sample interval weighted by its share outside recorded calls.
void fillComputePhase(RankCounters& r, const Trace& trace, const RankBreakdown& rb, const ThreadSeries& main) {
    const Series* clock = main.get("task_clock");
    if (!clock) return;
    Intervals iv = callIntervals(trace, rb.processId, rb.pid, clock->front().ts, clock->back().ts);
    double computeNs = 0;
    size_t cursor = 0;
    for (size_t i = 1; i < clock->size(); ++i) {
        double dt = double((*clock)[i].ts - (*clock)[i - 1].ts);
        computeNs += dt * outsideShare(iv, cursor, (*clock)[i - 1].ts, (*clock)[i].ts);
    }
    r.computeNs = int64_t(computeNs);
    r.computeUtilization = ratioOf(computeDelta(clock, iv), computeNs);
    const double computeWait = computeDelta(main.get("cpu_wait"), iv);
    r.computeWaitFraction = ratioOf(computeWait, computeNs);
    // Inside the calls: the sampled span's wait less the compute phase's.
    const double callsNs = double(clock->back().ts - clock->front().ts) - computeNs;
    const double wait = main.delta("cpu_wait");
    if (wait >= 0 && computeWait >= 0 && callsNs > 0)
        r.callsWaitFraction = std::clamp((wait - computeWait) / callsNs, 0.0, 1.0);
    r.computeIpc = ratioOf(computeDelta(main.get("PAPI_TOT_INS"), iv), computeDelta(main.get("PAPI_TOT_CYC"), iv));
}

/// One rank's counters (threads, busy threads; rates and compute phase from its main thread,
/// when sampled: *mainSampled); nullopt when the rank has no sampled thread.
std::optional<RankCounters> rankCounters(const Trace& trace, const RankBreakdown& rb, const ThreadMap& threads,
                                         std::map<int64_t, int64_t>& processSpan, int64_t t0, int64_t t1,
                                         bool* mainSampled) {
    RankCounters r;
    r.rank = rb.rank;
    r.host = rb.host;
    const ThreadSeries* main = nullptr;
    for (const auto& [key, t] : threads) {
        if (t.processId != rb.processId) continue;
        r.threads++;
        if (isBusy(t, processSpan[t.processId])) r.busyThreads++;
        if (t.tid == rb.pid) main = &t;
    }
    *mainSampled = main != nullptr;
    if (!main) return r.threads > 0 ? std::optional<RankCounters>(r) : std::nullopt;
    fillRates(r, *main);
    fillComputePhase(r, trace, rb, *main);
    size_t buckets = rb.overview.empty() ? 100 : rb.overview.size();
    r.utilizationOverview = overview(main->get("task_clock"), t0, t1, buckets);
    r.waitOverview = overview(main->get("cpu_wait"), t0, t1, buckets);
    return r;
}

} // namespace

CounterAnalysis analyzeCounters(const Trace& trace, const Analysis& a) {
    CounterAnalysis out;
    std::map<std::string, int64_t> cpus;
    readAvailability(trace, out, cpus);
    const int64_t t0 = a.summary.windowBegin, t1 = a.summary.windowEnd;
    std::map<int64_t, Proc> procs = readProcesses(trace);
    ThreadMap threads = readThreadSeries(trace, t0, t1);
    out.present = !threads.empty();
    if (!out.present) return out;

    std::map<int64_t, int64_t> processSpan = longestSpanPerProcess(threads);
    std::map<std::string, HostCounters> hosts;
    for (const auto& [key, t] : threads) {
        HostCounters& h = hosts[procs[t.processId].host];
        h.host = procs[t.processId].host;
        h.threads++;
        if (isBusy(t, processSpan[t.processId])) h.busyThreads++;
    }
    for (const auto& rb : a.ranks) {
        bool mainSampled = false;
        std::optional<RankCounters> r = rankCounters(trace, rb, threads, processSpan, t0, t1, &mainSampled);
        if (!r) continue;
        if (mainSampled) { // host rates are over ranks whose main thread was sampled
            HostCounters& h = hosts[rb.host];
            h.ranks++;
            if (r->involuntaryPerS >= 0)
                h.involuntaryPerS = (h.involuntaryPerS < 0 ? 0 : h.involuntaryPerS) + r->involuntaryPerS;
        }
        out.ranks.push_back(std::move(*r));
    }
    for (auto& [name, h] : hosts) {
        if (h.ranks > 0 && h.involuntaryPerS >= 0) h.involuntaryPerS /= double(h.ranks);
        auto it = cpus.find(name);
        h.cpus = it == cpus.end() ? 0 : it->second;
        out.hosts.push_back(h);
    }
    return out;
}

Result<std::vector<CounterTrackInfo>> counterTracks(const Trace& trace) {
    std::vector<CounterTrackInfo> out;
    schema::Statement s(detail::db(trace),
                        "SELECT ct.id, ct.process_id, p.rank, th.tid, ct.name, ct.unit,"
                        " (SELECT COUNT(*) FROM counter c WHERE c.counter_track_id = ct.id)"
                        " FROM counter_track ct JOIN process p ON p.id = ct.process_id"
                        " LEFT JOIN thread th ON th.id = ct.thread_id"
                        " ORDER BY p.rank IS NULL, p.rank, p.id, th.tid IS NULL, th.tid, ct.name");
    if (!s.valid()) return s.error();
    while (s.step()) {
        CounterTrackInfo t;
        t.id = s.int64(0);
        t.processId = s.int64(1);
        if (!s.isNull(2)) t.rank = s.int64(2);
        if (!s.isNull(3)) t.tid = s.int64(3);
        t.name = s.text(4);
        t.unit = s.text(5);
        t.samples = s.int64(6);
        out.push_back(std::move(t));
    }
    if (!s.error().ok()) return s.error();
    return out;
}

Result<std::vector<CounterPoint>> counterSeries(const Trace& trace, int64_t trackId, int64_t t0,
                                                int64_t t1, int64_t resolutionNs) {
    std::vector<CounterPoint> out;
    schema::Statement before(detail::db(trace), "SELECT ts, value FROM counter WHERE counter_track_id = ?"
                                         " AND ts < ? ORDER BY ts DESC LIMIT 1");
    if (!before.valid()) return before.error();
    before.bind(1, trackId);
    before.bind(2, t0);
    if (before.step()) out.push_back({before.int64(0), before.real(1)});
    schema::Statement s(detail::db(trace), "SELECT ts, value FROM counter WHERE counter_track_id = ?"
                                    " AND ts >= ? AND ts < ? ORDER BY ts");
    s.bind(1, trackId);
    s.bind(2, t0);
    s.bind(3, t1);
    int64_t lastBucket = INT64_MIN;
    while (s.step()) {
        CounterPoint p{s.int64(0), s.real(1)};
        int64_t bucket = resolutionNs > 0 ? (p.ts - t0) / resolutionNs : int64_t(out.size());
        if (resolutionNs > 0 && bucket == lastBucket && !out.empty() && out.back().ts >= t0)
            out.back() = p; // keep the bucket's last sample
        else
            out.push_back(p);
        lastBucket = bucket;
    }
    if (!s.error().ok()) return s.error();
    return out;
}

namespace {

/// Adds (at, v) to the chart, keeping the largest value per bucket of r ns.
void keepMax(std::vector<CounterPoint>& out, int64_t r, int64_t at, double v) {
    int64_t bucket = at - ((at % r) + r) % r;
    if (!out.empty() && out.back().ts == bucket)
        out.back().value = std::max(out.back().value, v);
    else
        out.push_back({bucket, v});
}

/// A sample interval of a running total: [t0, t1) and how much the counter grew in it.
struct Growth {
    int64_t t0, t1;
    double amount;
};

/// The sample intervals, merged until they span minIntervalNs (the last one may be shorter);
/// an interval over which the total fell counts as no growth.
std::vector<Growth> mergedIntervals(const std::vector<CounterPoint>& samples, int64_t minIntervalNs) {
    std::vector<Growth> out;
    size_t from = 0;
    for (size_t i = 1; i < samples.size(); ++i) {
        int64_t dt = samples[i].ts - samples[from].ts;
        if (dt <= 0 || (dt < minIntervalNs && i + 1 < samples.size())) continue;
        // A running total never falls: a fall of a few microseconds is two readings of one
        // clock taken out of order (the thread's own and the timer thread's), read as nothing.
        out.push_back({samples[from].ts, samples[i].ts, std::max(0.0, samples[i].value - samples[from].value)});
        from = i;
    }
    return out;
}

/// Caps every interval at maxRate and moves what it had beyond the cap back into the latest
/// earlier intervals that have room: the growth was counted late (see chartFromSamples), not
/// lost, so the total stays unless no earlier interval has room.
void capAndBackfill(std::vector<Growth>& g, double maxRate) {
    auto cap = [&](const Growth& x) { return maxRate * double(x.t1 - x.t0) / 1e9; };
    std::vector<size_t> room; // earlier intervals below their cap, latest last
    for (size_t i = 0; i < g.size(); ++i) {
        double excess = g[i].amount - cap(g[i]);
        if (excess > 0) g[i].amount = cap(g[i]);
        while (excess > 0 && !room.empty()) {
            Growth& e = g[room.back()];
            const double take = std::min(excess, cap(e) - e.amount);
            e.amount += take;
            excess -= take;
            if (e.amount >= cap(e)) room.pop_back();
        }
        if (g[i].amount < cap(g[i])) room.push_back(i);
    }
}

} // namespace

std::vector<CounterPoint> chartFromSamples(const std::vector<CounterPoint>& samples, const ChartOptions& o) {
    std::vector<CounterPoint> out;
    const int64_t r = std::max<int64_t>(1, o.resolutionNs);
    if (o.ratio) {
        for (const auto& s : samples) keepMax(out, r, s.ts, s.value);
        return out;
    }
    // A sample's timestamp and its reading are not taken at the same instant (the timer thread
    // reads each thread's clock in turn), and the kernel adds a thread's run-queue wait only when
    // it next runs, so one short interval can show 4.8 ms of CPU in 0.84 ms. Intervals are
    // therefore merged until they span minIntervalNs, like the derived ratio tracks, and what one
    // has beyond maxRate goes back into the earlier intervals it was late for.
    std::vector<Growth> g = mergedIntervals(samples, o.minIntervalNs);
    if (o.maxRate > 0) capAndBackfill(g, o.maxRate);
    for (const auto& x : g) keepMax(out, r, x.t0, x.amount * 1e9 / double(x.t1 - x.t0));
    return out;
}

Result<std::vector<CounterPoint>> counterChart(const Trace& trace, int64_t trackId, bool ratio,
                                               int64_t t0, int64_t t1, int64_t resolutionNs,
                                               double maxRate) {
    const int64_t r = std::max<int64_t>(1, resolutionNs);
    // One bucket of margin on each side: the first rate needs the sample before the window.
    schema::Statement s(detail::db(trace), "SELECT ts, value FROM counter WHERE counter_track_id = ?"
                                    " AND ts >= ? AND ts <= ? ORDER BY ts");
    if (!s.valid()) return s.error();
    s.bind(1, trackId);
    s.bind(2, t0 - r);
    s.bind(3, t1 + r);
    std::vector<CounterPoint> samples;
    while (s.step()) samples.push_back({s.int64(0), s.real(1)});
    if (!s.error().ok()) return s.error();
    ChartOptions o;
    o.ratio = ratio;
    o.resolutionNs = r;
    o.maxRate = maxRate;
    return chartFromSamples(samples, o);
}

std::vector<CounterPoint> ratePerSecond(const std::vector<CounterPoint>& points) {
    std::vector<CounterPoint> out;
    for (size_t i = 1; i < points.size(); ++i) {
        int64_t dt = points[i].ts - points[i - 1].ts;
        if (dt <= 0) continue;
        out.push_back({points[i].ts, (points[i].value - points[i - 1].value) * 1e9 / double(dt)});
    }
    return out;
}

} // namespace hpcprof::analyzer
