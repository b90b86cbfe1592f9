// SPDX-License-Identifier: MIT
// RDMA analysis over nic_queue tracks. Work-request events span post to completion; bytes count
// in the bin where the request was posted. Aggregate events (count > 1) add their count and
// bytes, and count as small requests when their mean size is small, but give no latency samples
// (their histogram stays in event_arg). The per-cause totals come from the posting calls on the
// threads (ibv_post_*, ibv_wr_complete, with the store's caused_by* attribution), which stay one
// event each however many of their requests were folded into aggregates.
#include "rdma_analysis.hpp"
#include "trace_access.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::analyzer {

namespace {

std::optional<int64_t> percentile(std::vector<int64_t>& v, double p) {
    if (v.empty()) return std::nullopt;
    size_t k = size_t(std::ceil(p * double(v.size()))) - 1;
    k = std::min(k, v.size() - 1);
    std::nth_element(v.begin(), v.begin() + ptrdiff_t(k), v.end());
    return v[k];
}

double gbps(int64_t bytes, int64_t ns) { return ns > 0 ? double(bytes) * 8.0 / double(ns) : 0; }

/// Most traces have no RDMA: decided with the small track table before anything scans.
Result<bool> hasNicQueues(sqlite3* db) {
    schema::Statement any(db, "SELECT EXISTS(SELECT 1 FROM track WHERE kind = 'nic_queue' AND event_count > 0)");
    if (!any.step()) return any.error().ok() ? Status::error("RDMA analysis: cannot read tracks") : any.error();
    return any.int64(0) != 0;
}

/// The time bins of the bandwidth-over-time series: from the first process start, `bins` of
/// them over the span of the processes.
struct Bins {
    int64_t t0 = 0;
    int64_t binNs = 0; ///< 0 = no series
    size_t count = 0;
};

Bins timeBins(sqlite3* db, int bins) {
    int64_t t0 = 0, t1 = 0;
    schema::Statement s(db, "SELECT MIN(start_ts), MAX(COALESCE(end_ts, start_ts)) FROM process");
    if (s.step()) {
        t0 = s.int64(0);
        t1 = s.int64(1);
    }
    Bins b;
    b.t0 = t0;
    b.binNs = bins > 0 ? std::max<int64_t>(1, (t1 - t0 + bins - 1) / bins) : 0;
    b.count = b.binNs > 0 ? size_t(bins) : 0;
    return b;
}

/// Link rate per process: fastest device opened there (ibv_open_device's link_rate_mbps).
/// From the (small) set of link_rate_mbps arguments, so the event table is not scanned.
Result<std::map<int64_t, int64_t>> linkRates(sqlite3* db) {
    std::map<int64_t, int64_t> linkRate;
    schema::Statement s(db, "SELECT t.process_id, MAX(CAST(a.value AS INTEGER)) FROM event_arg a"
                            " JOIN event e ON e.id = a.event_id JOIN track t ON t.id = e.track_id"
                            " JOIN string n ON n.id = e.name_id WHERE a.key = 'link_rate_mbps'"
                            " AND n.value = 'ibv_open_device' GROUP BY t.process_id");
    while (s.step()) linkRate[s.int64(0)] = s.int64(1);
    if (!s.error().ok()) return s.error();
    return linkRate;
}

/// Sums one queue's work-request events (the current binding of `ev`) into `q`, their bytes
/// into `binBytes` by posting time, and collects their latencies.
void scanQueueEvents(schema::Statement& ev, const Bins& bins, RdmaQueueStats& q, std::vector<int64_t>& binBytes,
                     std::vector<int64_t>& latencies) {
    bool first = true;
    while (ev.step()) {
        int64_t ts = ev.int64(0), dur = ev.int64(1), bytes = ev.int64(2), count = ev.int64(3);
        q.workRequests += count;
        q.bytes += bytes;
        if (bytes < kRdmaSmallBytes * count) q.smallWorkRequests += count;
        if (!ev.isNull(4)) latencies.push_back(ev.int64(4));
        if (first || ts < q.firstTs) q.firstTs = ts;
        q.lastEnd = std::max(q.lastEnd, ts + dur);
        first = false;
        if (!binBytes.empty()) {
            size_t b = size_t(std::clamp<int64_t>((ts - bins.t0) / bins.binNs, 0, int64_t(binBytes.size()) - 1));
            binBytes[b] += bytes;
        }
    }
}

/// The rates and latency percentiles of a scanned queue.
void finishQueue(const Bins& bins, const std::vector<int64_t>& binBytes, std::vector<int64_t>& latencies,
                 RdmaQueueStats& q) {
    q.achievedGbps = gbps(q.bytes, q.lastEnd - q.firstTs);
    for (size_t b = 0; b < binBytes.size(); ++b) {
        q.gbpsOverTime[b] = gbps(binBytes[b], bins.binNs);
        q.peakBinGbps = std::max(q.peakBinGbps, q.gbpsOverTime[b]);
    }
    q.latencyP50Ns = percentile(latencies, 0.50);
    q.latencyP90Ns = percentile(latencies, 0.90);
    q.latencyP99Ns = percentile(latencies, 0.99);
    if (!latencies.empty()) q.latencyMaxNs = *std::max_element(latencies.begin(), latencies.end());
}

/// Every nic_queue track with events, by rank then track id.
Status queueStats(sqlite3* db, const Bins& bins, const std::map<int64_t, int64_t>& linkRate,
                  std::vector<RdmaQueueStats>& queues) {
    schema::Statement tracks(db, "SELECT t.id, t.process_id, p.rank, t.name, t.first_event_id,"
                                 " t.last_event_id FROM track t JOIN process p ON p.id = t.process_id"
                                 " WHERE t.kind = 'nic_queue' AND t.event_count > 0 ORDER BY p.rank, t.id");
    schema::Statement ev(db, "SELECT e.ts, e.dur, COALESCE(e.bytes, 0), COALESCE(e.count, 1),"
                             " (SELECT value FROM event_arg a WHERE a.event_id = e.id AND a.key = 'latency_ns')"
                             " FROM event e WHERE e.id BETWEEN ?1 AND ?2 AND e.track_id = ?3");
    while (tracks.step()) {
        RdmaQueueStats q;
        q.trackId = tracks.int64(0);
        q.processId = tracks.int64(1);
        if (!tracks.isNull(2)) q.rank = tracks.int64(2);
        q.name = tracks.text(3);
        auto rate = linkRate.find(q.processId);
        q.linkRateMbps = rate != linkRate.end() ? rate->second : 0;
        q.gbpsOverTime.assign(bins.count, 0.0);
        std::vector<int64_t> binBytes(bins.count, 0);
        std::vector<int64_t> latencies;
        ev.reset();
        ev.bind(1, tracks.int64(4));
        ev.bind(2, tracks.int64(5));
        ev.bind(3, q.trackId);
        scanQueueEvents(ev, bins, q, binBytes, latencies);
        if (!ev.error().ok()) return ev.error();
        finishQueue(bins, binBytes, latencies, q);
        queues.push_back(std::move(q));
    }
    return tracks.error();
}

/// Work requests per (posting call's cause, communicator), bytes descending: the posting calls on
/// the threads of processes with RDMA lanes (each call's track range only).
Result<std::vector<RdmaCause>> causeTotals(sqlite3* db) {
    struct CauseTotals {
        std::set<int64_t> seqs;
        int64_t workRequests = 0, bytes = 0;
    };
    std::map<std::pair<std::string, std::string>, CauseTotals> causes; // (call, communicator)
    schema::Statement posts(
        db, "SELECT (SELECT value FROM event_arg a WHERE a.event_id = e.id AND a.key = 'caused_by'),"
            " (SELECT value FROM event_arg a WHERE a.event_id = e.id AND a.key = 'caused_by_communicator'),"
            " (SELECT value FROM event_arg a WHERE a.event_id = e.id AND a.key = 'caused_by_seq'),"
            " COALESCE(e.bytes, 0),"
            " (SELECT value FROM event_arg a WHERE a.event_id = e.id AND a.key = 'work_requests')"
            " FROM track t JOIN event e ON e.id BETWEEN t.first_event_id AND t.last_event_id"
            " AND e.track_id = t.id"
            " WHERE t.kind != 'nic_queue' AND t.event_count > 0 AND t.process_id IN"
            " (SELECT process_id FROM track WHERE kind = 'nic_queue' AND event_count > 0)"
            " AND e.name_id IN (SELECT id FROM string WHERE value IN"
            " ('ibv_post_send', 'ibv_post_recv', 'ibv_post_srq_recv', 'ibv_wr_complete'))");
    while (posts.step()) {
        CauseTotals& c = causes[{posts.isNull(0) ? std::string() : posts.text(0),
                                 posts.isNull(1) ? std::string() : posts.text(1)}];
        c.workRequests += posts.isNull(4) ? 0 : posts.int64(4);
        c.bytes += posts.int64(3);
        if (!posts.isNull(0) && !posts.isNull(2)) c.seqs.insert(posts.int64(2));
    }
    if (!posts.error().ok()) return posts.error();
    std::vector<RdmaCause> out;
    for (auto& [key, c] : causes)
        out.push_back({key.first, key.second, int64_t(c.seqs.size()), c.workRequests, c.bytes});
    std::stable_sort(out.begin(), out.end(), [](const RdmaCause& a, const RdmaCause& b) { return a.bytes > b.bytes; });
    return out;
}

/// Per rank (per process): sums over its queues; rates over the span of its RDMA activity.
std::vector<RdmaRankStats> rankStats(const std::vector<RdmaQueueStats>& queues) {
    std::map<int64_t, RdmaRankStats> ranks;
    std::map<int64_t, std::pair<int64_t, int64_t>> span;
    for (const auto& q : queues) {
        RdmaRankStats& r = ranks[q.processId];
        r.rank = q.rank;
        r.processId = q.processId;
        r.workRequests += q.workRequests;
        r.bytes += q.bytes;
        r.smallWorkRequests += q.smallWorkRequests;
        r.linkRateMbps = std::max(r.linkRateMbps, q.linkRateMbps);
        auto [it, inserted] = span.try_emplace(q.processId, q.firstTs, q.lastEnd);
        if (!inserted) {
            it->second.first = std::min(it->second.first, q.firstTs);
            it->second.second = std::max(it->second.second, q.lastEnd);
        }
    }
    std::vector<RdmaRankStats> out;
    for (auto& [pid, r] : ranks) {
        int64_t ns = span[pid].second - span[pid].first;
        r.achievedGbps = gbps(r.bytes, ns);
        r.smallMessageRatePerS = ns > 0 ? double(r.smallWorkRequests) * 1e9 / double(ns) : 0;
        out.push_back(r);
    }
    return out;
}

} // namespace

Result<RdmaAnalysis> analyzeRdma(const Trace& trace, int bins) {
    RdmaAnalysis out;
    sqlite3* db = detail::db(trace);
    Result<bool> any = hasNicQueues(db);
    if (!any.ok()) return any.status();
    if (!any.value()) return out;
    const Bins timeBinning = timeBins(db, bins);
    out.binNs = timeBinning.binNs;
    auto linkRate = linkRates(db);
    if (!linkRate.ok()) return linkRate.status();
    HPCPROF_RETURN_IF_ERROR(queueStats(db, timeBinning, *linkRate, out.queues));
    auto causes = causeTotals(db);
    if (!causes.ok()) return causes.status();
    out.causes = std::move(*causes);
    out.ranks = rankStats(out.queues);
    return out;
}

} // namespace hpcprof::analyzer
