// SPDX-License-Identifier: MIT
// The analysis driver: the ranks and their windows (rank_units.cpp), one pass over each rank's
// tracks on worker threads (rank_pass.cpp), then the data families' cross-rank results, the
// core's POP metrics, steps, job summary and data quality, the families' conclusions and the
// advice rules. It never names a family (family_analysis.hpp). Memory: one rank's intervals per
// worker plus what the families keep across ranks; their folds take each rank's scan as soon as
// its pass ends (the point-to-point messages are matched there and dropped, the collective calls
// written out as runs: collective_runs.hpp), the rest waits for combine().
#include "hpcprof/analyzer/analyze.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "advice/rule_spec.hpp"
#include "family_analysis.hpp"
#include "hpcprof/analyzer/event_query.hpp"
#include "pop_metrics.hpp"
#include "process_roles.hpp"
#include "rank_pass.hpp"
#include "rank_units.hpp"
#include "step_ranges.hpp"
#include "steps.hpp"
#include "thresholds.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer {

namespace {

using detail::RankPass;
using detail::RankUnit;

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

/// The link the collective-bandwidth rule compares with: the option, else the trace's metadata
/// (a value that is not a positive number is noted and ignored), else 100 Gb/s.
double linkBandwidth(const Trace& trace, const AnalysisOptions& options, std::vector<DataWarning>& notes) {
    if (options.linkBandwidthBytesPerS > 0) return options.linkBandwidthBytesPerS;
    const std::string m = trace.metadata("link_bandwidth_bytes_per_s");
    if (!m.empty()) {
        char* end = nullptr;
        const double v = std::strtod(m.c_str(), &end);
        if (end != m.c_str() && *end == 0 && v > 0 && std::isfinite(v)) return v;
        notes.push_back({"link_bandwidth_unreadable", 1,
                         "analysis: metadata link_bandwidth_bytes_per_s is not a positive number; "
                         "the default link was used"});
    }
    return threshold::kDefaultLinkBytesPerS;
}

/// True when the query gives a first row.
bool any(const Trace& trace, const char* sql) {
    schema::Statement s(detail::db(trace), sql);
    return s.step();
}

/// The kind of program, for the wording of the advice: MPI when it calls MPI (the PMPI agent
/// named the rank, or MPI_Init is among the names); data-parallel training when its ranks come
/// from torchrun's RANK or a PyTorch trace, or it calls NCCL; else plain processes.
std::string programKind(const Trace& trace) {
    if (any(trace, "SELECT 1 FROM process WHERE rank_source = 'MPI' LIMIT 1") ||
        any(trace, "SELECT 1 FROM string WHERE value IN ('MPI_Init', 'MPI_Init_thread') LIMIT 1"))
        return "mpi";
    if (any(trace, "SELECT 1 FROM process WHERE rank_source IN ('RANK', 'distributedInfo') LIMIT 1") ||
        any(trace, "SELECT 1 FROM string WHERE value GLOB 'nccl[A-Z]*' LIMIT 1"))
        return "data_parallel";
    return "processes";
}

/// The collective-bandwidth rule's yardstick: ranks all on one host copy through memory, not
/// through the link between hosts.
void chooseCollectiveBandwidth(Analysis& an, const AnalysisOptions& options) {
    bool oneHost = an.ranks.size() > 1;
    for (const auto& r : an.ranks) oneHost = oneHost && r.host == an.ranks.front().host;
    an.collectiveBandwidthBasis = oneHost ? "memory" : "link";
    an.collectiveBandwidthBytesPerS =
        !oneHost ? an.linkBandwidthBytesPerS
        : options.memoryBandwidthBytesPerS > 0 ? options.memoryBandwidthBytesPerS
                                               : threshold::kDefaultMemoryCopyBytesPerS;
}

/// The advice, worded for the program, and the sum of the findings' exclusive gains.
void addFindings(Analysis& an, const Trace& trace, const AnalysisOptions& options) {
    an.programKind = programKind(trace);
    chooseCollectiveBandwidth(an, options);
    an.findings = advice::runRules(an);
    for (const auto& f : an.findings) an.findingsGainNs += f.exclusiveGainNs;
}

/// The families' folds, each handed every rank's scan as its pass ends (pass.rankDone): what
/// they keep across ranks need not wait for every rank's pass.
void makeFolds(const std::vector<std::unique_ptr<AnalysisFamily>>& families, detail::PassContext& pass,
               std::vector<std::unique_ptr<RankFold>>& folds) {
    for (const auto& f : families) folds.push_back(f->rankFold());
    pass.rankDone = [&folds](RankPass& p) {
        for (size_t f = 0; f < folds.size(); ++f)
            if (folds[f] && p.scans[f]) folds[f]->add(*p.scans[f]);
    };
}

/// Each family's cross-rank results from its scans and its fold.
Status combineFamilies(const std::vector<std::unique_ptr<AnalysisFamily>>& families, AnalysisContext& ctx,
                       std::vector<std::unique_ptr<RankFold>>& folds,
                       std::vector<std::vector<std::unique_ptr<RankScan>>>& scans, Analysis& an) {
    for (size_t f = 0; f < families.size(); ++f) {
        ctx.fold = folds[f].get();
        HPCPROF_RETURN_IF_ERROR(families[f]->combine(ctx, scans[f], an));
    }
    ctx.fold = nullptr;
    scans.clear();
    folds.clear();
    return {};
}

void attachStepBreakdowns(StepStats& steps, const std::vector<RankPass>& passes);

/// The passes' breakdowns into the analysis and each step's into `steps`; their scans, by family.
std::vector<std::vector<std::unique_ptr<RankScan>>> takePasses(std::vector<RankPass>& passes, size_t families,
                                                               StepStats& steps, Analysis& an) {
    attachStepBreakdowns(steps, passes);
    std::vector<std::vector<std::unique_ptr<RankScan>>> scans(families);
    for (RankPass& p : passes) {
        for (size_t f = 0; f < families; ++f) scans[f].push_back(std::move(p.scans[f]));
        an.ranks.push_back(std::move(p.breakdown));
    }
    passes.clear();
    return scans;
}

/// The passes' scan problems, summed.
ScanQuality sumQuality(const std::vector<RankPass>& passes) {
    ScanQuality q;
    for (const RankPass& p : passes) {
        q.negativeDurations += p.quality.negativeDurations;
        q.unsortedEvents += p.quality.unsortedEvents;
        q.tracksWithoutIdRange += p.quality.tracksWithoutIdRange;
        q.unknownCategories += p.quality.unknownCategories;
        q.timesOutOfRange += p.quality.timesOutOfRange;
        q.outsideRun += p.quality.outsideRun;
    }
    return q;
}

/// The chosen range family's ranges that overlap each rank's window are the steps; each rank's
/// unit gets its own, for their breakdown in the pass.
StepStats stepsInWindows(const StepStats& chosen, const detail::RangeFamilies& ranges, detail::RankUnits& ranks) {
    if (chosen.source.rfind("range:", 0) != 0) return chosen;
    const std::string family = chosen.source.substr(6);
    const auto& byRank = ranges.families.at(family);
    std::map<int64_t, std::vector<Interval>> kept;
    for (auto& [r, u] : ranks.units) {
        auto it = byRank.find(r);
        if (it == byRank.end()) continue;
        for (const Interval& iv : it->second)
            if (u.window.lengthIn(iv.begin, iv.end) > 0) kept[r].push_back(iv);
        u.steps = kept[r];
    }
    StepStats s = stepsFromRanges(kept, family);
    s.basis = chosen.basis;
    s.reason = chosen.reason;
    s.tiling = chosen.tiling;
    return s;
}

/// The steps from ranges (before the pass: the default window is made of them, and the pass
/// computes each step's breakdown) and each rank's window, ended where recording stopped.
/// With `scanRanges` false (the trace's metadata rules ranges out) nothing is read for them.
Result<IntervalSet> stepsAndWindows(const Trace& trace, const TraceIndex& ix, const AnalysisOptions& options,
                                    bool scanRanges, detail::RankUnits& ranks, StepStats& steps,
                                    WindowChoice& choice, int64_t& ranksStopped) {
    auto families = scanRanges ? detail::scanRangeFamilies(trace, ix, ranks, options.threads)
                               : Result<detail::RangeFamilies>(detail::RangeFamilies{});
    if (!families) return families.status();
    HPCPROF_RETURN_IF_ERROR(detail::setActivity(trace, ranks, *families));
    auto chosen = detail::chooseRangeSteps(*families, ranks, options.steps);
    if (!chosen) return chosen.status();
    auto job = detail::chooseWindows(trace, ix, options.window, *chosen, ranks, choice);
    if (!job) return job.status();
    ranksStopped = detail::endWindowsWhereRecordingStopped(ranks.units);
    steps = stepsInWindows(*chosen, *families, ranks);
    return job;
}

/// Each rank's steps from ranges get the breakdown its pass computed.
void attachStepBreakdowns(StepStats& steps, const std::vector<RankPass>& passes) {
    for (RankSteps& rs : steps.ranks)
        for (const RankPass& p : passes)
            if (p.breakdown.rank == rs.rank && p.steps.size() == rs.steps.size()) rs.steps = p.steps;
}

/// The steps from ranges, else the collective pattern (unless --steps named a range family);
/// each rank's list held to the options' limit.
Result<StepStats> stepsOrCollectives(StepStats steps, const AnalysisContext& ctx, const AnalysisOptions& options) {
    const std::string& option = options.steps;
    if (!steps.steps.empty() || !ctx.collectiveRuns || (!option.empty() && option != "collectives")) {
        // No collective pattern asked for: a --steps family outside the window stays empty.
        limitRankSteps(steps, options.maxRankStepItems, options.slowestRankSteps);
        return steps;
    }
    auto found = stepsFromCollectives(*ctx.collectiveRuns, ctx.extraCollectives, options.maxRankStepItems,
                                      options.slowestRankSteps);
    if (!found || found->steps.empty()) return found;
    StepStats& c = *found;
    c.basis = option.empty() ? "collectives" : "option";
    c.reason = "collective pattern (every " + c.source.substr(c.source.find(':') + 1) + " collective calls)";
    return found;
}

void summarize(Analysis& an) {
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
        js.setupTotalNs += rb.setupTotalNs;
    }
}

/// Data quality: the trace's own stats, then what this analysis met.
Status addDataQuality(const Trace& trace, const TraceIndex& ix, const ScanQuality& quality,
                      int64_t ranksStopped, Analysis& an) {
    auto stats = traceStats(trace);
    if (!stats) return stats.status();
    for (const StatRow& st : *stats)
        an.warnings.push_back({st.name, st.value, st.severity + ": " + st.description});
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
    return {};
}

/// At least 2 ranks whose rank some source gave (MPI, the launcher's environment, an import):
/// only then are the cross-rank analyses meaningful.
bool crossRankJob(const detail::RankUnits& ranks) {
    int64_t n = 0;
    for (const auto& [r, u] : ranks.units)
        for (const ProcessInfo* p : u.processes)
            if (p->rank && !p->rankSource.empty()) {
                ++n;
                break;
            }
    return n >= 2;
}

/// Workers and other non-rank processes: each over its own life inside the job window, with
/// the core's breakdown only (the data families' cross-rank results are the ranks').
std::vector<RankPass> otherPasses(const Trace& trace, detail::PassContext pass, detail::RankUnits& ranks,
                                  const IntervalSet& jobWindow, int threads) {
    static const std::vector<std::unique_ptr<AnalysisFamily>> kNoFamilies;
    pass.families = &kNoFamilies;
    pass.rankDone = nullptr;
    std::vector<const RankUnit*> list;
    for (auto& [i, u] : ranks.others) {
        u.window = u.active.intersect(jobWindow);
        list.push_back(&u);
    }
    std::vector<RankPass> out;
    if (!list.empty()) detail::runRankPasses(trace, pass, list, threads, out);
    return out;
}

/// Every process with its role; workers and others with their breakdown and what their parent
/// waited for them.
/// One entry per operating-system process: an image that ended in exec() (a launcher's child
/// before it became a rank, a shell before the program) is the same process as the image that
/// followed it (same host and pid), which names the entry and takes its waits.
void foldExecImages(const std::vector<ProcessInfo>& ps, std::vector<ProcessEntry>& entries) {
    std::map<std::pair<std::string, int64_t>, size_t> lastImage; // (host, pid) -> latest index
    std::vector<bool> folded(ps.size(), false);
    for (size_t i = 0; i < ps.size(); ++i) {
        auto it = lastImage.find({ps[i].host, ps[i].pid});
        if (it != lastImage.end() && ps[it->second].execed) {
            entries[i].waitedForNs += entries[it->second].waitedForNs;
            entries[i].waitedForCalls += entries[it->second].waitedForCalls;
            folded[it->second] = true;
        }
        lastImage[{ps[i].host, ps[i].pid}] = i;
    }
    size_t out = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (folded[i]) continue;
        if (out != i) entries[out] = std::move(entries[i]);
        ++out;
    }
    entries.resize(out);
}

Status describeProcesses(const Trace& trace, const TraceIndex& ix, const detail::RankUnits& ranks,
                         std::vector<RankPass>& others, Analysis& an) {
    const auto& ps = ix.processes();
    an.processes.resize(ps.size());
    for (size_t i = 0; i < ps.size(); ++i) {
        ProcessEntry& e = an.processes[i];
        e.processId = ps[i].id;
        e.pid = ps[i].pid;
        e.ppid = ps[i].ppid;
        e.host = ps[i].host;
        e.command = ps[i].command;
        e.role = ranks.roles.role[i];
        if (auto up = ranks.roles.parent[i]) e.parentPid = ps[*up].pid;
        e.unit = ranks.unitOf[i];
    }
    size_t k = 0;
    for (const auto& [i, u] : ranks.others) {
        if (!others[k].status.ok()) return others[k].status;
        an.processes[i].breakdown = std::move(others[k++].breakdown);
    }
    HPCPROF_RETURN_IF_ERROR(detail::waitsForWorkers(trace, ps, ranks.roles, an.processes));
    foldExecImages(ps, an.processes);
    return {};
}

/// The processes' roles, the breakdowns of the workers and others, and whether the job is
/// cross-rank.
Status analyseProcesses(const Trace& trace, const TraceIndex& ix, const detail::PassContext& pass,
                        detail::RankUnits& ranks, const IntervalSet& jobWindow, int threads, Analysis& an) {
    auto others = otherPasses(trace, pass, ranks, jobWindow, threads);
    HPCPROF_RETURN_IF_ERROR(describeProcesses(trace, ix, ranks, others, an));
    an.crossRank = crossRankJob(ranks);
    for (const ProcessEntry& p : an.processes) {
        if (p.role != ProcessRole::Worker || !p.unit) continue;
        for (RankBreakdown& rb : an.ranks)
            if (rb.rank == *p.unit) rb.workerWaitNs += p.waitedForNs;
    }
    return {};
}

/// Several processes of a program without ranks are not a parallel decomposition: no POP (a
/// single process without workers keeps its trivial one).
void setPop(Analysis& an, const AnalysisOptions& options) {
    const bool alone = an.ranks.size() == 1 && std::none_of(an.processes.begin(), an.processes.end(), [](const ProcessEntry& p) {
        return p.role == ProcessRole::Worker || p.role == ProcessRole::Other;
    });
    an.pop = computePop(an.ranks, an.waits, options.popIncludesSetup);
    if (an.crossRank || alone) return;
    PopMetrics none; // the runtime stays: the rules size their gains by it
    none.runtimeNs = an.pop.runtimeNs;
    none.region = "none";
    an.pop = none;
}

} // namespace

const char* processRoleName(ProcessRole r) {
    switch (r) {
    case ProcessRole::Rank: return "rank";
    case ProcessRole::Main: return "main";
    case ProcessRole::Worker: return "worker";
    case ProcessRole::Launcher: return "launcher";
    case ProcessRole::Other: return "other";
    }
    return "other";
}

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
    if (text == "all") {
        w.kind = WindowSpec::Kind::Whole;
        return w;
    }
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
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str()) return std::nullopt; // no number at all
        std::string unit(end);
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

namespace {

/// The analysis; with `scanRanges` false (the trace's metadata says no event is a range) the
/// step ranges are not read, and when the pass meets one all the same, nothing (the caller
/// then analyses again with them).
Result<std::optional<Analysis>> analyzeOnce(const Trace& trace, const TraceIndex& ix, const AnalysisOptions& options,
                                            bool scanRanges) {
    const auto& families = analysisFamilies();
    Analysis an;
    an.tracePath = trace.path();
    an.window = options.window;

    // --- Ranks and their windows. ---
    auto ranks = detail::rankUnits(trace, ix);
    if (!ranks) return ranks.status();
    StepStats steps;
    int64_t ranksStopped = 0;
    auto job = stepsAndWindows(trace, ix, options, scanRanges, *ranks, steps, an.windowChoice, ranksStopped);
    if (!job) return job.status();
    IntervalSet jobWindow = std::move(job.value());
    an.summary.windowBegin = jobWindow.empty() ? 0 : jobWindow.items().front().begin;
    an.summary.windowEnd = jobWindow.empty() ? 0 : jobWindow.items().back().end;
    an.summary.wallNs = an.summary.windowEnd - an.summary.windowBegin;
    std::vector<DataWarning> notes;
    an.linkBandwidthBytesPerS = linkBandwidth(trace, options, notes);

    // --- Per rank: one pass over its tracks, ranks on worker threads, merged in rank order. ---
    std::vector<const RankUnit*> unitList;
    for (const auto& [r, u] : ranks->units) unitList.push_back(&u);
    detail::PassContext pass;
    pass.index = &ix;
    pass.jobBegin = an.summary.windowBegin;
    pass.jobEnd = an.summary.windowEnd;
    pass.overviewBuckets = options.overviewBuckets;
    pass.families = &families;
    std::vector<std::unique_ptr<RankFold>> folds;
    makeFolds(families, pass, folds);
    std::vector<RankPass> passes;
    detail::runRankPasses(trace, pass, unitList, options.threads, passes);
    for (const auto& p : passes) {
        if (!p.status.ok()) return p.status;
        if (!scanRanges && p.rangeEventsSeen) return std::optional<Analysis>();
    }
    const ScanQuality quality = sumQuality(passes);
    std::vector<std::vector<std::unique_ptr<RankScan>>> scans = takePasses(passes, families.size(), steps, an);
    HPCPROF_RETURN_IF_ERROR(analyseProcesses(trace, ix, pass, *ranks, jobWindow, options.threads, an));

    // --- Across ranks: the families' results, then the core's. ---
    AnalysisContext ctx{trace, ix, options, {}, {}, {}};
    for (const auto& [r, u] : ranks->units) ctx.windows.emplace_back(r, u.window);
    ctx.rangeSteps = &steps;
    HPCPROF_RETURN_IF_ERROR(combineFamilies(families, ctx, folds, scans, an));
    setPop(an, options);
    auto found = stepsOrCollectives(std::move(steps), ctx, options);
    if (!found) return found.status();
    an.steps = std::move(*found);
    ctx.collectiveRuns.reset();
    summarize(an);
    HPCPROF_RETURN_IF_ERROR(addDataQuality(trace, ix, quality, ranksStopped, an));
    an.warnings.insert(an.warnings.end(), notes.begin(), notes.end());
    for (const auto& f : families) HPCPROF_RETURN_IF_ERROR(f->conclude(ctx, an));
    addFindings(an, trace, options);
    return std::optional<Analysis>(std::move(an));
}

} // namespace

Result<Analysis> analyzeTrace(const Trace& trace, const AnalysisOptions& options) {
    auto loaded = TraceIndex::load(trace);
    if (!loaded) return loaded.status();
    // Reading the ranges is a full read of the CPU threads' events: skipped when the trace's
    // metadata says there are none, which the pass checks (a trace changed by hand after it
    // was written), reading everything again with them if it is wrong.
    const bool rangesRuledOut = detail::metadataRulesOutRanges(trace);
    auto once = analyzeOnce(trace, *loaded, options, !rangesRuledOut);
    if (!once) return once.status();
    if (*once) return std::move(**once);
    auto again = analyzeOnce(trace, *loaded, options, true);
    if (!again) return again.status();
    Analysis an = std::move(**again);
    an.warnings.push_back({"event_categories_stale", 1,
                           "analysis: the trace's metadata event_categories leaves out the user or NVTX ranges "
                           "its events hold (the trace was changed after it was written): read again with them"});
    return an;
}

} // namespace hpcprof::analyzer
