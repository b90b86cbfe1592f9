// SPDX-License-Identifier: MIT
// The analysis driver: resolves ranks and the window, streams each rank's tracks once to build
// its interval sets and facts (rank_pass.cpp, ranks in parallel), then runs the cross-rank
// analyses and the advice rules. Memory is bounded by one rank's intervals per worker plus the
// compact collective/message call lists.
#include "hpcprof/analyzer/analyze.hpp"
#include "trace_access.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "advice/rule_spec.hpp"
#include "attribution.hpp"
#include "hpcprof/analyzer/counters.hpp"
#include "hpcprof/analyzer/event_query.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "pop_metrics.hpp"
#include "rdma_analysis.hpp"
#include "steps.hpp"
#include "thresholds.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
#include "wait_states.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "rank_pass.hpp"

namespace hpcprof::analyzer {

namespace {

using detail::RankPass;
using detail::RankUnit;
using detail::TopAccumulator;
using threshold::kDefaultLinkBytesPerS;
using threshold::kLargeCollectiveBytes;

void addExample(RankFacts& f, const char* key, int64_t id) {
    auto& v = f.examples[key];
    if (v.size() < 3) v.push_back(id);
}

bool globMatch(const std::string& pattern, const std::string& name) {
    if (!pattern.empty() && pattern.back() == '*')
        return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
    return name == pattern;
}

/// A thread that stopped recording (thread.recording_stopped_ts: full disk, quota, buffer limit)
/// leaves its rank's time after that unknown, which the attribution would otherwise call
/// compute. Each rank's window ends at the earliest stop of a thread its breakdown stands on: a
/// reference track (CPU ranks), or any of its threads (GPU ranks: their GPU activity reaches the
/// trace through a thread of the process). Returns the number of ranks cut.
int64_t endWindowsWhereRecordingStopped(std::map<int64_t, RankUnit>& units) {
    int64_t cut = 0;
    for (auto& [r, u] : units) {
        const TrackInfo* first = nullptr;
        for (const TrackInfo* t : u.tracks) {
            if (!t->recordingStoppedTs || (!u.gpu && u.referenceTracks.count(t->id) == 0)) continue;
            if (!first || *t->recordingStoppedTs < *first->recordingStoppedTs) first = t;
        }
        const int64_t stop = first ? *first->recordingStoppedTs : 0;
        if (!first || u.window.empty() || stop >= u.window.items().back().end) continue;
        u.recordingStoppedTs = stop;
        u.stopReason = first->stopReason;
        const int64_t begin = std::min(stop, u.window.items().front().begin);
        u.window = u.window.intersect(IntervalSet::single(begin, stop));
        ++cut;
    }
    return cut;
}

/// Events whose track_id names no track: no scan reads them. Found without a scan when the
/// event ids are exactly the ones the track table accounts for (the store writes them so).
int64_t eventsWithoutTrack(const Trace& trace, const TraceIndex& ix) {
    schema::Statement first(detail::db(trace), "SELECT id FROM event ORDER BY id LIMIT 1");
    schema::Statement last(detail::db(trace), "SELECT id FROM event ORDER BY id DESC LIMIT 1");
    if (!first.step() || !last.step()) return 0; // no events
    if (last.int64(0) - first.int64(0) + 1 == ix.eventCount()) return 0;
    schema::Statement orphans(
        detail::db(trace), "SELECT COUNT(*) FROM event WHERE track_id NOT IN (SELECT id FROM track)");
    return orphans.step() ? orphans.int64(0) : 0;
}

} // namespace

const char* severityName(Severity s) {
    switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Critical: return "critical";
    }
    return "info";
}

bool parseSeverity(const std::string& text, Severity& out) {
    if (text == "info") out = Severity::Info;
    else if (text == "warning") out = Severity::Warning;
    else if (text == "critical") out = Severity::Critical;
    else return false;
    return true;
}

Result<WindowSpec> parseWindow(const std::string& text) {
    WindowSpec w;
    w.text = text;
    if (text.empty()) return w;
    if (text.rfind("range:", 0) == 0) {
        w.kind = WindowSpec::Kind::RangeName;
        w.pattern = text.substr(6);
        if (w.pattern.empty()) return Status::error("--window range: needs a range name");
        return w;
    }
    auto colon = text.find(':');
    if (colon == std::string::npos)
        return Status::error("--window '" + text + "': expected T0:T1 or range:NAME");
    auto parseTime = [](const std::string& s, int64_t fallback) -> std::optional<int64_t> {
        if (s.empty()) return fallback;
        size_t pos = 0;
        double v = 0;
        try {
            v = std::stod(s, &pos);
        } catch (...) {
            return std::nullopt;
        }
        std::string unit = s.substr(pos);
        double scale = unit == "" || unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : -1;
        // Beyond 2^62 ns (146 years), "nan" or "inf": not a time of any trace (and converting
        // it would overflow into a window of the whole run).
        if (scale < 0 || !(v >= 0) || !(v * scale <= 0x1p62)) return std::nullopt;
        return int64_t(std::llround(v * scale));
    };
    auto b = parseTime(text.substr(0, colon), 0);
    auto e = parseTime(text.substr(colon + 1), INT64_MAX);
    if (!b || !e || *e <= *b)
        return Status::error("--window '" + text + "': expected T0:T1 with T0 < T1 (units ns, us, ms, s)");
    w.kind = WindowSpec::Kind::TimeRange;
    w.begin = *b;
    w.end = *e;
    return w;
}

Result<Analysis> analyzeTrace(const Trace& trace, const AnalysisOptions& options) {
    auto loaded = TraceIndex::load(trace);
    if (!loaded) return loaded.status();
    const TraceIndex& ix = *loaded;
    Analysis an;
    an.tracePath = trace.path();
    an.window = options.window;

    // --- Ranks: processes with a rank (grouped, an exec'ed process keeps its rank), else every
    // process on its own, numbered in process order. ---
    std::map<int64_t, RankUnit> units;
    bool anyRank = std::any_of(ix.processes().begin(), ix.processes().end(),
                               [](const ProcessInfo& p) { return p.rank.has_value(); });
    int64_t ordinal = 0;
    for (const auto& p : ix.processes()) {
        if (anyRank && !p.rank) continue;
        int64_t r = anyRank ? *p.rank : ordinal++;
        units[r].rank = r;
        units[r].processes.push_back(&p);
    }
    if (units.empty()) return Status::error(trace.path() + ": the trace has no processes to analyse");
    // Process times out of range (damage) are left out of the run like event times are.
    auto clampTime = [](int64_t ns) { return std::clamp(ns, -kTimeLimitNs + 1, kTimeLimitNs - 1); };

    int64_t jobBegin = INT64_MAX, jobEnd = INT64_MIN;
    for (auto& [r, u] : units) {
        for (const ProcessInfo* p : u.processes) {
            int64_t b = clampTime(p->startTs), e = clampTime(p->endTs.value_or(p->startTs));
            const TrackInfo* busiest = nullptr;
            bool mainFound = false;
            for (const TrackInfo* t : ix.tracksOf(p->id)) {
                u.tracks.push_back(t);
                auto bounds = trackTimeBounds(trace, *t);
                if (!bounds) return bounds.status();
                if (*bounds) {
                    b = std::min(b, (*bounds)->begin);
                    e = std::max(e, (*bounds)->end);
                }
                if (t->kind == TrackKind::GpuStream) u.gpu = true;
                if (t->kind != TrackKind::CpuThread) continue;
                if (t->tid && *t->tid == p->pid) {
                    u.referenceTracks.insert(t->id);
                    mainFound = true;
                }
                if (!busiest || t->eventCount > busiest->eventCount) busiest = t;
            }
            if (!mainFound && busiest) u.referenceTracks.insert(busiest->id);
            u.active.add(b, e);
            jobBegin = std::min(jobBegin, b);
            jobEnd = std::max(jobEnd, e);
        }
        u.active.normalize();
    }

    // --- Window. ---
    IntervalSet jobWindow;
    switch (options.window.kind) {
    case WindowSpec::Kind::Whole: jobWindow = IntervalSet::single(jobBegin, jobEnd); break;
    case WindowSpec::Kind::TimeRange:
        jobWindow = IntervalSet::single(std::max(jobBegin, options.window.begin),
                                        std::min(jobEnd, options.window.end));
        if (jobWindow.empty())
            return Status::error("window " + options.window.text + " does not overlap the trace (" +
                                 std::to_string(jobBegin) + ".." + std::to_string(jobEnd) + " ns)");
        break;
    case WindowSpec::Kind::RangeName: {
        std::vector<int64_t> nameIds;
        schema::Statement names(detail::db(trace), "SELECT id, value FROM string");
        while (names.step())
            if (globMatch(options.window.pattern, names.text(1))) nameIds.push_back(names.int64(0));
        std::map<int64_t, int64_t> processToRank;
        for (auto& [r, u] : units)
            for (auto* p : u.processes) processToRank[p->id] = r;
        IntervalSet all;
        if (!nameIds.empty()) {
            std::string list;
            for (int64_t id : nameIds) list += (list.empty() ? "" : ",") + std::to_string(id);
            schema::Statement s(detail::db(trace),
                                "SELECT e.ts, e.dur, t.process_id FROM event e JOIN track t ON t.id = e.track_id"
                                " JOIN category c ON c.id = e.category_id WHERE c.class = 'annotation'"
                                " AND e.name_id IN (" + list + ")");
            while (s.step()) {
                int64_t b = s.int64(0), e = b + std::max<int64_t>(0, s.int64(1));
                all.add(b, e);
                auto it = processToRank.find(s.int64(2));
                if (it != processToRank.end()) units[it->second].window.add(b, e);
            }
            if (!s.error().ok()) return s.error();
        }
        all.normalize();
        if (all.empty())
            return Status::error("window " + options.window.text + ": no user or NVTX range named '" +
                                 options.window.pattern + "' in the trace");
        for (auto& [r, u] : units) {
            u.window.normalize();
            if (u.window.empty()) u.window = all; // ranks without their own ranges use everyone's
        }
        jobWindow = all;
        break;
    }
    }
    if (options.window.kind != WindowSpec::Kind::RangeName)
        for (auto& [r, u] : units) u.window = jobWindow;
    int64_t ranksStopped = endWindowsWhereRecordingStopped(units);
    if (jobWindow.empty()) jobWindow = IntervalSet::single(0, 0);

    an.summary.windowBegin = jobWindow.empty() ? 0 : jobWindow.items().front().begin;
    an.summary.windowEnd = jobWindow.empty() ? 0 : jobWindow.items().back().end;
    an.summary.wallNs = an.summary.windowEnd - an.summary.windowBegin;

    double link = options.linkBandwidthBytesPerS;
    if (link <= 0) {
        try {
            std::string m = trace.metadata("link_bandwidth_bytes_per_s");
            if (!m.empty()) link = std::stod(m);
        } catch (...) {
        }
    }
    if (link <= 0) link = kDefaultLinkBytesPerS;
    an.linkBandwidthBytesPerS = link;

    // --- Per rank: one pass over its tracks, ranks on worker threads, merged in rank order. ---
    std::vector<const RankUnit*> unitList;
    for (const auto& [r, u] : units) unitList.push_back(&u);
    detail::PassContext ctx;
    ctx.index = &ix;
    ctx.jobBegin = an.summary.windowBegin;
    ctx.jobEnd = an.summary.windowEnd;
    ctx.overviewBuckets = options.overviewBuckets;
    std::vector<RankPass> passes;
    detail::runRankPasses(trace, ctx, unitList, options.threads, passes);

    ScanQuality quality;
    std::vector<CollectiveCall> collectives;
    std::vector<P2pCall> messages;
    std::map<std::string, std::map<int64_t, std::vector<Interval>>> stepRanges; // family -> rank
    TopAccumulator topKernels, topCollectives, topFiles;
    {
        size_t nColl = 0, nMsg = 0;
        for (const auto& p : passes) {
            if (!p.status.ok()) return p.status;
            nColl += p.collectives.size();
            nMsg += p.messages.size();
        }
        collectives.reserve(nColl);
        messages.reserve(nMsg);
    }
    for (RankPass& p : passes) {
        const int64_t r = p.breakdown.rank;
        quality.negativeDurations += p.quality.negativeDurations;
        quality.unsortedEvents += p.quality.unsortedEvents;
        quality.tracksWithoutIdRange += p.quality.tracksWithoutIdRange;
        quality.unknownCategories += p.quality.unknownCategories;
        quality.timesOutOfRange += p.quality.timesOutOfRange;
        quality.outsideRun += p.quality.outsideRun;
        collectives.insert(collectives.end(), p.collectives.begin(), p.collectives.end());
        messages.insert(messages.end(), p.messages.begin(), p.messages.end());
        for (auto& [family, ranges] : p.stepRanges) stepRanges[family][r] = std::move(ranges);
        topKernels.merge(p.topKernels);
        topCollectives.merge(p.topCollectives);
        topFiles.merge(p.topFiles);
        an.ranks.push_back(std::move(p.breakdown));
        p = RankPass(); // the call lists now live in the merged vectors
    }
    passes.clear();

    // --- Cross-rank. ---
    std::vector<int64_t> rankIds;
    for (const auto& rb : an.ranks) rankIds.push_back(rb.rank);
    // Non-blocking calls: the waits that completed them (mpi_completion) and the actual source
    // of wildcard receives. Posts the scan did not see (MPI_Startall's requests) are added, but
    // only where they touch their rank's window.
    const size_t scanned = messages.size();
    HPCPROF_RETURN_IF_ERROR(loadP2pCompletions(trace, messages));
    messages.erase(std::remove_if(messages.begin() + long(scanned), messages.end(),
                                  [&](const P2pCall& m) {
                                      auto u = units.find(m.rank);
                                      int64_t end = std::max(m.end, m.waitEnd);
                                      return u == units.end() || u->second.window.lengthIn(m.ts, std::max(end, m.ts + 1)) == 0;
                                  }),
                   messages.end());
    an.waits = computeWaitStates(collectives, std::move(messages), rankIds, [&](int64_t id) -> std::optional<int64_t> {
        const CommunicatorInfo* c = ix.communicator(id);
        return c ? c->size : std::nullopt;
    });
    an.pop = computePop(an.ranks, an.waits);

    // Large collectives: achieved bandwidth = bytes / (duration - wait).
    // Sorted vectors instead of map lookups: a job has one collective call per rank and instance.
    const std::vector<std::pair<int64_t, int64_t>> waitByEvent(an.waits.waitByEvent.begin(),
                                                               an.waits.waitByEvent.end());
    for (const auto& c : collectives) {
        if (c.bytes < kLargeCollectiveBytes) continue;
        auto w = std::lower_bound(waitByEvent.begin(), waitByEvent.end(), std::make_pair(c.eventId, INT64_MIN));
        int64_t wait = w != waitByEvent.end() && w->first == c.eventId ? w->second : 0;
        // an.ranks is in rank order (units is a map by rank) and holds every rank with calls.
        auto rb = std::lower_bound(an.ranks.begin(), an.ranks.end(), c.rank,
                                   [](const RankBreakdown& b, int64_t rank) { return b.rank < rank; });
        RankFacts& f = rb->facts;
        ++f.largeCollectives;
        f.largeCollectiveBytes += c.bytes;
        f.largeCollectiveTransferNs += std::max<int64_t>(0, c.end - c.ts - wait);
        addExample(f, "large_collective", c.eventId);
    }

    // Steps: the range family with the most instances, else the collective pattern.
    std::string bestFamily;
    size_t bestCount = 0;
    for (const auto& [family, byRank] : stepRanges) {
        size_t n = 0;
        for (const auto& [rr, v] : byRank) n += v.size();
        if (n > bestCount) {
            bestCount = n;
            bestFamily = family;
        }
    }
    an.steps = bestCount > 0 ? stepsFromRanges(stepRanges[bestFamily], bestFamily)
                             : stepsFromCollectives(collectives);

    // Job summary.
    JobSummary& js = an.summary;
    js.rankCount = int64_t(an.ranks.size());
    for (const auto& rb : an.ranks) {
        if (rb.gpu) ++js.gpuRankCount;
        js.events += rb.events;
        js.totalNs += rb.windowNs;
        for (int c = 0; c < kTimeClassCount; ++c) js.exclusive[c] += rb.exclusive[c];
        js.commTotalNs += rb.commTotalNs;
        js.commOverlappedNs += rb.commOverlappedNs;
        js.ioTotalNs += rb.ioTotalNs;
        js.ioOverlappedNs += rb.ioOverlappedNs;
    }

    an.topKernels = topKernels.top(options.topItems, [&](int64_t id) { return ix.string(id); });
    an.topCollectives = topCollectives.top(options.topItems, [&](int64_t id) { return ix.string(id); });
    an.topFiles = topFiles.top(options.topItems, [&](int64_t id) {
        return id < 0 ? std::string("(no file)") : ix.objectName(id);
    });

    // Data quality: the trace's own stats, then what this analysis met.
    {
        auto stats = traceStats(trace);
        if (!stats) return stats.status();
        for (const StatRow& st : *stats)
            an.warnings.push_back({st.name, st.value, st.severity + ": " + st.description});
    }
    auto warn = [&](const char* name, int64_t n, const char* what) {
        if (n > 0) an.warnings.push_back({name, n, what});
    };
    warn("ranks_stopped_recording", ranksStopped,
         "data_loss: analysis: ranks a thread of which stopped recording (full disk, quota, buffer "
         "limit): their window ends there (what they did after it is unknown, not compute)");
    warn("negative_durations_read", quality.negativeDurations,
         "analysis: events with a negative duration were read as instants (dur 0)");
    warn("unsorted_events", quality.unsortedEvents,
         "analysis: events out of time order within their track (the attribution sorts them; timeline queries may miss some)");
    warn("tracks_without_id_range", quality.tracksWithoutIdRange,
         "analysis: tracks without an event id range were scanned by track id (slow)");
    warn("unknown_categories", quality.unknownCategories,
         "analysis: events of unknown categories were treated as annotations");
    an.unusedRows.negativeDuration = quality.negativeDurations;
    an.unusedRows.outsideRun = quality.outsideRun;
    an.unusedRows.timeOutOfRange = quality.timesOutOfRange;
    an.unusedRows.unknownTrack = eventsWithoutTrack(trace, ix);
    warn("events_outside_run", quality.outsideRun,
         "analysis: events that start before or end after their rank's run (clock or data damage); "
         "the part outside the run is not counted");
    warn("events_unknown_track", an.unusedRows.unknownTrack,
         "analysis: events whose track_id names no track; not read");
    warn("events_time_out_of_range", quality.timesOutOfRange,
         "analysis: events whose ts or dur is beyond +-2^62 ns (146 years); skipped");
    warn("incomplete_collectives", an.waits.incompleteInstances,
         "analysis: collective instances missing members (not used for wait states)");
    warn("unmatched_messages", an.waits.unmatchedMessages,
         "analysis: point-to-point calls without a matching partner call");

    an.counters = analyzeCounters(trace, an);
    auto rdma = analyzeRdma(trace);
    if (!rdma) return rdma.status();
    an.rdma = std::move(rdma.value());
    an.findings = advice::runRules(an);
    return an;
}

} // namespace hpcprof::analyzer
