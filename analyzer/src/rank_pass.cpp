// SPDX-License-Identifier: MIT
// The per-rank pass of the analysis and its worker threads. A rank's pass touches only its own
// tracks, so ranks are handed out to workers one at a time (an atomic counter: big ranks do not
// stall the others), each worker reading through its own read-only SQLite connection. The core
// builds the rank's interval sets and step ranges; every event inside the window goes to the
// scans of the data families that take its category (family_analysis.hpp).
#include "rank_pass.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "attribution.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "name_flags.hpp"
#include "step_ranges.hpp"
#include "steps.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer::detail {

namespace {

using schema::Category;
/// More workers than this bring nothing: the pass is bound by SQLite decoding per core, and each
/// worker maps the file and keeps one rank's interval sets.
constexpr unsigned kMaxWorkers = 8;

/// One worker's reader: its name cache, the families' dispatch by category, the interval sets.
class RankScanner {
public:
    RankScanner(const Trace& trace, const PassContext& ctx)
        : m_trace(trace), m_ix(*ctx.index), m_ctx(ctx), m_names(*ctx.index), m_pages(EventPageReader::open(trace)) {
        const auto& families = *ctx.families;
        for (size_t f = 0; f < families.size(); ++f)
            for (Category c : families[f]->categories()) {
                if (size_t(c) >= m_byCategory.size()) {
                    m_byCategory.resize(size_t(c) + 1);
                    m_detailsOf.resize(size_t(c) + 1, 0);
                }
                m_byCategory[size_t(c)].push_back(int(f));
                if (families[f]->needsDetails()) m_detailsOf[size_t(c)] = 1;
            }
    }

    void run(const RankUnit& u, RankPass& out);

private:
    /// The window test of one rank: instants count at their ts.
    struct Window {
        const IntervalSet& set;
        int64_t begin, end;
        bool contains(const EventRecord& e) const {
            const int64_t last = std::max(e.end(), e.ts + 1);
            if (e.ts >= end || last <= begin) return false;
            return set.items().size() == 1 || set.lengthIn(e.ts, last) > 0;
        }
    };

    void beginRank(const RankUnit& u, RankPass& out);
    Status scanTrack(const RankUnit& u, const TrackInfo& t, const Window& win, RankPass& out);
    void setupBoundary(const EventRecord& e);
    void addToSets(const EventRecord& e, bool ref, bool gpuTrack);
    void finishRank(const RankUnit& u, RankPass& out);

    const Trace& m_trace;
    const TraceIndex& m_ix;
    const PassContext& m_ctx;
    NameFlags m_names;
    /// The events read below SQL where the trace allows it (null: all through SQL).
    std::unique_ptr<EventPageReader> m_pages;
    std::vector<std::vector<int>> m_byCategory; ///< category id -> families taking it
    std::vector<uint8_t> m_detailsOf;           ///< category id -> a family reads its details
    TimelineSets m_sets;
    int64_t m_initEnd = INT64_MIN;     ///< end of the rank's last MPI_Init(_thread)
    int64_t m_finalizeBegin = INT64_MAX; ///< start of its first MPI_Finalize
};

void RankScanner::beginRank(const RankUnit& u, RankPass& out) {
    RankBreakdown& rb = out.breakdown;
    rb.rank = u.rank;
    rb.processId = u.processes.front()->id;
    rb.pid = u.processes.front()->pid;
    rb.host = u.processes.front()->host;
    for (const ProcessInfo* p : u.processes) // an exec'ed image inherits its predecessor's folder
        if (!p->cwd.empty()) {
            rb.cwd = p->cwd;
            break;
        }
    rb.gpu = u.gpu;
    rb.recordingStoppedTs = u.recordingStoppedTs;
    rb.stopReason = u.stopReason;
    // The interval sets are the pass's big allocations: reused from rank to rank, so their
    // memory is not returned to the system and faulted in again for every rank.
    for (auto& s : m_sets.all) s.clear();
    for (auto& s : m_sets.reference) s.clear();
    m_sets.gpu = u.gpu;
    m_initEnd = INT64_MIN;
    m_finalizeBegin = INT64_MAX;
    const auto& families = *m_ctx.families;
    out.scans.clear();
    for (const auto& f : families) out.scans.push_back(f->rankScan(m_trace, m_ix));
}

/// The ends of the region the program computes in: MPI_Init's return, MPI_Finalize's call.
void RankScanner::setupBoundary(const EventRecord& e) {
    if (!(m_names.of(e.nameId) & kInitOrFinalize)) return;
    if (m_ix.string(e.nameId).find("inal") != std::string::npos) // MPI_Finalize, any case
        m_finalizeBegin = std::min(m_finalizeBegin, e.ts);
    else
        m_initEnd = std::max(m_initEnd, e.end());
}

void RankScanner::addToSets(const EventRecord& e, bool ref, bool gpuTrack) {
    m_sets.all[int(e.cls)].add(e.ts, e.end());
    if (ref) m_sets.reference[int(e.cls)].add(e.ts, e.end());
    if (e.cls == EventClass::Setup && !gpuTrack) setupBoundary(e);
}

Status RankScanner::scanTrack(const RankUnit& u, const TrackInfo& t, const Window& win, RankPass& out) {
    const bool gpuTrack = t.kind == TrackKind::GpuStream, cpuTrack = t.kind == TrackKind::CpuThread;
    const bool ref = u.gpu ? gpuTrack : u.referenceTracks.count(t.id) > 0;
    for (auto& scan : out.scans)
        if (scan) scan->beginTrack(t, gpuTrack);
    // The rank's run: events that start before it or end after it are damage (clock or data);
    // the whole-run window would cut them silently.
    const int64_t runBegin = u.active.empty() ? 0 : u.active.items().front().begin;
    const int64_t runEnd = u.active.empty() ? 0 : u.active.items().back().end;
    return analyzer::scanTrack(m_trace, m_ix, t, out.quality, [&](const EventRecord& e) {
        ++out.breakdown.events;
        if (e.ts < runBegin || e.end() > runEnd) ++out.quality.outsideRun;
        if (e.cls != EventClass::Annotation)
            addToSets(e, ref, gpuTrack);
        else if (cpuTrack && isStepRangeCategory(e.categoryId))
            out.rangeEventsSeen = true;
        if (!win.contains(e)) return;
        if (e.categoryId < 0 || size_t(e.categoryId) >= m_byCategory.size()) return;
        const EventContext ctx{t, gpuTrack, ref, m_names.of(e.nameId)};
        for (int f : m_byCategory[size_t(e.categoryId)]) out.scans[size_t(f)]->onEvent(e, ctx);
    }, &m_detailsOf, m_pages.get());
}

/// The breakdown inside the region between MPI_Init and MPI_Finalize (the whole window when the
/// rank has neither, or when they do not enclose anything).
void setRegion(const Attribution& a, const IntervalSet& window, int64_t initEnd, int64_t finalizeBegin,
               RankBreakdown& rb) {
    const int64_t wb = window.empty() ? 0 : window.items().front().begin;
    const int64_t we = window.empty() ? 0 : window.items().back().end;
    rb.regionBegin = std::clamp(initEnd, wb, we);
    rb.regionEnd = std::clamp(finalizeBegin, wb, we);
    if (rb.regionEnd <= rb.regionBegin) {
        rb.regionBegin = wb;
        rb.regionEnd = we;
    }
    rb.regionNs = window.lengthIn(rb.regionBegin, rb.regionEnd);
    for (int c = 0; c < kTimeClassCount; ++c)
        rb.regionExclusive[c] = a.partition[c].lengthIn(rb.regionBegin, rb.regionEnd);
}

/// Each step's exclusive breakdown: the rank's partition cut to the step (so the classes of a
/// step add up to the part of it inside the window).
std::vector<RankStep> stepBreakdowns(const Attribution& a, const std::vector<Interval>& steps) {
    std::vector<RankStep> out;
    out.reserve(steps.size());
    for (const Interval& iv : steps) {
        RankStep st;
        st.index = int64_t(out.size());
        st.begin = iv.begin;
        st.end = iv.end;
        st.hasBreakdown = true;
        for (int c = 0; c < kTimeClassCount; ++c) st.exclusive[c] = a.partition[c].lengthIn(iv.begin, iv.end);
        st.gpuIdleNs = a.gpuIdle.lengthIn(iv.begin, iv.end);
        out.push_back(st);
    }
    return out;
}

void RankScanner::finishRank(const RankUnit& u, RankPass& out) {
    RankBreakdown& rb = out.breakdown;
    m_sets.normalize();
    Attribution a = attribute(m_sets, u.window, u.active);
    std::copy(std::begin(a.exclusive), std::end(a.exclusive), std::begin(rb.exclusive));
    rb.windowNs = a.windowNs;
    rb.activeNs = a.activeNs;
    rb.commTotalNs = a.commTotalNs;
    rb.commOverlappedNs = a.commOverlappedNs;
    rb.ioTotalNs = a.ioTotalNs;
    rb.ioOverlappedNs = a.ioOverlappedNs;
    rb.memoryTotalNs = a.memoryTotalNs;
    rb.syncTotalNs = a.syncTotalNs;
    rb.setupTotalNs = a.setupTotalNs;
    rb.gpuIdleNs = a.gpuIdleNs;
    setRegion(a, u.window, m_initEnd, m_finalizeBegin, rb);
    out.steps = stepBreakdowns(a, u.steps);
    rb.overview = overviewStrip(a, m_ctx.jobBegin, m_ctx.jobEnd, m_ctx.overviewBuckets);
    const RankEnd end{rb, m_sets, u.window, a.partition[int(TimeClass::Io)], a.gpuIdle};
    for (auto& scan : out.scans)
        if (scan) scan->finish(end);
}

void RankScanner::run(const RankUnit& u, RankPass& out) {
    beginRank(u, out);
    const IntervalSet& set = u.window;
    const Window win{set, set.empty() ? 0 : set.items().front().begin,
                     set.empty() ? 0 : set.items().back().end};
    for (const TrackInfo* t : u.tracks) {
        Status st = scanTrack(u, *t, win, out);
        if (!st.ok()) {
            out.status = st;
            return;
        }
    }
    finishRank(u, out);
}

} // namespace

void onWorkers(const Trace& trace, size_t items, int threads,
               const std::function<void(const Trace& conn, std::atomic<size_t>& next)>& worker) {
    unsigned want = threads > 0 ? unsigned(threads) : std::min(kMaxWorkers, std::thread::hardware_concurrency());
    want = std::max(1u, std::min<unsigned>(want, unsigned(std::max<size_t>(items, 1))));
    // The caller's connection serves the first worker; the others get their own (a Trace is
    // used by one thread at a time).
    std::vector<Trace> extra;
    for (unsigned i = 1; i < want; ++i) {
        auto t = Trace::open(trace.path());
        if (!t) break; // fewer workers; the result is the same
        extra.push_back(std::move(t.value()));
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    workers.reserve(extra.size());
    for (const Trace& conn : extra) {
        try {
            workers.emplace_back(worker, std::cref(conn), std::ref(next));
        } catch (const std::system_error&) {
            break; // no thread to be had: the remaining workers take its share
        }
    }
    worker(trace, next);
    for (auto& w : workers) w.join();
}

void runRankPasses(const Trace& trace, const PassContext& ctx, const std::vector<const RankUnit*>& units,
                   int threads, std::vector<RankPass>& out) {
    out.clear();
    out.resize(units.size());
    std::mutex doneLock;
    onWorkers(trace, units.size(), threads, [&](const Trace& conn, std::atomic<size_t>& next) {
        RankScanner scanner(conn, ctx);
        for (size_t i = next.fetch_add(1); i < units.size(); i = next.fetch_add(1)) {
            scanner.run(*units[i], out[i]);
            if (!ctx.rankDone || !out[i].status.ok()) continue;
            std::lock_guard<std::mutex> hold(doneLock);
            ctx.rankDone(out[i]);
        }
    });
}

} // namespace hpcprof::analyzer::detail
