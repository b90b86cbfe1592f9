// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/class_shares.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "attribution.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "trace_access.hpp"
#include "rank_units.hpp"

namespace hpcprof::analyzer {

/// A worker's own connection (a connection is used by one thread at a time) and its window
/// query (which remembers each track's longest event).
struct ShareWorker {
    std::unique_ptr<Trace> trace;
    std::unique_ptr<TimelineQuery> query;
};

struct ClassShareQuery::Units {
    detail::RankUnits units;
    /// The workers beyond the caller's thread, opened on first use and kept for later queries.
    std::vector<ShareWorker> workers;
    bool workersOpened = false;
};

namespace {

/// [begin, end) of `buckets` buckets, as one interval set (the attribution's window).
IntervalSet spanOf(int64_t begin, int64_t bucketNs, int buckets) {
    return IntervalSet::single(begin, begin + bucketNs * int64_t(buckets));
}

/// The partition of `a` measured bucket by bucket.
ClassBuckets bucketize(const Attribution& a, int64_t begin, int64_t bucketNs, int buckets) {
    ClassBuckets out;
    out.begin = begin;
    out.bucketNs = bucketNs;
    out.buckets = buckets;
    out.ns.assign(size_t(buckets) * kTimeClassCount, 0);
    for (int c = 0; c < kTimeClassCount; ++c) {
        const auto& items = a.partition[c].items();
        // One walk over the class's intervals, each split over the buckets it crosses.
        for (const Interval& iv : items) {
            int64_t t = std::max(iv.begin, begin);
            while (t < iv.end) {
                const int64_t b = (t - begin) / bucketNs;
                if (b >= buckets) break;
                const int64_t bucketEnd = begin + (b + 1) * bucketNs;
                const int64_t e = std::min(iv.end, bucketEnd);
                out.ns[size_t(b) * kTimeClassCount + size_t(c)] += e - t;
                t = e;
            }
        }
    }
    return out;
}


} // namespace

ClassShareQuery::ClassShareQuery(const Trace& trace, const TraceIndex& index)
    : m_trace(trace), m_index(index), m_query(trace), m_units(std::make_unique<Units>()) {}

ClassShareQuery::~ClassShareQuery() = default;

Result<std::unique_ptr<ClassShareQuery>> ClassShareQuery::open(const Trace& trace, const TraceIndex& index) {
    auto units = detail::rankUnits(trace, index);
    if (!units) return units.status();
    std::unique_ptr<ClassShareQuery> q(new ClassShareQuery(trace, index));
    q->m_units->units = std::move(*units);
    return q;
}

std::vector<int64_t> ClassShareQuery::ranks() const {
    std::vector<int64_t> out;
    for (const auto& [r, u] : m_units->units.units) out.push_back(r);
    return out;
}

std::optional<int64_t> ClassShareQuery::rankOfProcess(int64_t processId) const {
    const auto& procs = m_index.processes();
    for (size_t i = 0; i < procs.size(); ++i) {
        if (procs[i].id != processId) continue;
        if (i >= m_units->units.unitOf.size() || !m_units->units.unitOf[i]) return std::nullopt;
        const int64_t r = *m_units->units.unitOf[i];
        // Workers belong to a rank but are not part of its summary.
        bool member = false;
        auto it = m_units->units.units.find(r);
        if (it != m_units->units.units.end())
            for (const ProcessInfo* p : it->second.processes) member = member || p->id == processId;
        return member ? std::optional<int64_t>(r) : std::nullopt;
    }
    return std::nullopt;
}

bool ClassShareQuery::gapsAreCompute(int64_t trackId) const {
    for (const auto& [r, u] : m_units->units.units)
        if (!u.gpu && u.referenceTracks.count(trackId)) return true;
    return false;
}

namespace {

/// One rank's sets while its tracks' events arrive (track by track), then its buckets.
class RankMeasure {
public:
    RankMeasure(const detail::RankUnit& u, int64_t begin, int64_t bucketNs, int buckets, bool withTracks)
        : m_u(u), m_begin(begin), m_bucketNs(bucketNs), m_buckets(buckets), m_withTracks(withTracks),
          m_window(spanOf(begin, bucketNs, buckets)) {
        m_out.rank = u.rank;
        m_out.gpu = u.gpu;
        m_rank.gpu = u.gpu;
    }
    int64_t end() const { return m_begin + m_bucketNs * int64_t(m_buckets); }

    void beginTrack(const TrackInfo& t) {
        const bool gpuTrack = t.kind == TrackKind::GpuStream;
        m_ref = m_u.gpu ? gpuTrack : m_u.referenceTracks.count(t.id) > 0;
        // A CPU rank's one main thread is its own reference: its buckets are the rank's summary.
        m_isSummary = !m_u.gpu && m_ref && m_u.referenceTracks.size() == 1;
        if (m_isSummary) m_summaryTrack = t.id;
        m_own = TimelineSets{};
        m_own.gpu = !(m_ref && !m_u.gpu); // only a CPU rank's main thread computes outside its calls
    }
    void add(EventClass c, int64_t ts, int64_t end) {
        if (c == EventClass::Annotation) return;
        if (m_u.gpu) m_rank.all[int(c)].add(ts, end); // a CPU rank's partition reads its reference only
        if (m_ref) m_rank.reference[int(c)].add(ts, end);
        if (m_withTracks && !m_isSummary) m_own.all[int(c)].add(ts, end);
    }
    void endTrack(int64_t trackId) {
        if (!m_withTracks || m_isSummary) return;
        // A track alone is its own reference. Without totals the partition reads, on a GPU-like
        // timeline, the blocking classes of `all` and the compute of `reference`, on a CPU one
        // `reference` only: each set is moved where it is read.
        for (int c = 0; c < kEventClassCount; ++c) {
            m_own.all[c].normalize();
            if (!m_own.gpu || EventClass(c) == EventClass::Compute) m_own.reference[c] = std::move(m_own.all[c]);
        }
        m_out.tracks[trackId] =
            bucketize(attribute(m_own, m_window, m_u.active, false), m_begin, m_bucketNs, m_buckets);
    }
    RankClassBuckets finish() {
        m_rank.normalize();
        m_out.summary = bucketize(attribute(m_rank, m_window, m_u.active, false), m_begin, m_bucketNs, m_buckets);
        if (m_withTracks && m_summaryTrack) m_out.tracks[*m_summaryTrack] = m_out.summary;
        return std::move(m_out);
    }

private:
    const detail::RankUnit& m_u;
    int64_t m_begin, m_bucketNs;
    int m_buckets;
    bool m_withTracks, m_ref = false, m_isSummary = false;
    std::optional<int64_t> m_summaryTrack; ///< the main thread whose buckets are the summary's
    IntervalSet m_window;
    TimelineSets m_rank, m_own;
    RankClassBuckets m_out;
};

/// Whether an event read from a track's id range belongs to [t0, t1) as TimelineQuery::slices
/// finds it: started before t1, and not ended before t0 (an instant at t0 is in).
bool inWindow(int64_t ts, int64_t dur, int64_t t0, int64_t t1) {
    return ts < t1 && !(ts + dur < t0 || (ts + dur == t0 && dur > 0));
}

/// Event classes by category id, looked up once per category per worker.
class ClassCache {
public:
    explicit ClassCache(const TraceIndex& index) : m_index(index) {}
    EventClass of(int64_t categoryId) {
        if (categoryId < 0 || categoryId >= 4096) return m_index.categoryClass(categoryId);
        if (size_t(categoryId) >= m_cls.size()) m_cls.resize(size_t(categoryId) + 1, -1);
        int8_t& c = m_cls[size_t(categoryId)];
        if (c < 0) c = int8_t(m_index.categoryClass(categoryId));
        return EventClass(c);
    }

private:
    const TraceIndex& m_index;
    std::vector<int8_t> m_cls;
};

/// One worker of allRanks: its connection, its statement, and the rank it measures.
Result<RankClassBuckets> sweepRank(schema::Statement& range, ClassCache& classes, const detail::RankUnit& u,
                                   int64_t begin, int64_t bucketNs, int buckets, bool withTracks) {
    RankMeasure m(u, begin, bucketNs, buckets, withTracks);
    const int64_t end = m.end();
    for (const TrackInfo* t : u.tracks) {
        m.beginTrack(*t);
        if (t->firstEventId && t->lastEventId) {
            range.reset();
            range.bind(1, *t->firstEventId);
            range.bind(2, *t->lastEventId);
            while (range.step()) {
                const int64_t ts = range.int64(0), dur = std::max<int64_t>(0, range.int64(1));
                if (inWindow(ts, dur, begin, end)) m.add(classes.of(range.int64(2)), ts, ts + dur);
            }
            if (!range.error().ok()) return range.error();
        }
        m.endTrack(t->id);
    }
    return m.finish();
}

/// A rank's buckets from its tracks' events in the window (a range query per track).
Result<RankClassBuckets> windowRank(TimelineQuery& query, const TraceIndex& index, const detail::RankUnit& u,
                                    int64_t begin, int64_t bucketNs, int buckets, bool withTracks) {
    RankMeasure m(u, begin, bucketNs, buckets, withTracks);
    for (const TrackInfo* t : u.tracks) {
        auto slices = query.slices(t->id, begin, m.end(), 0);
        if (!slices) return slices.status();
        m.beginTrack(*t);
        for (const TimelineSlice& s : slices->slices) m.add(index.categoryClass(s.categoryId), s.ts, s.ts + s.dur);
        m.endTrack(t->id);
    }
    return m.finish();
}

} // namespace

Result<RankClassBuckets> ClassShareQuery::rank(int64_t rank, int64_t begin, int64_t bucketNs, int buckets,
                                               bool withTracks) {
    auto it = m_units->units.units.find(rank);
    if (it == m_units->units.units.end()) return Status::error("no rank " + std::to_string(rank));
    if (bucketNs <= 0 || buckets <= 0) return Status::error("class buckets: empty bucket grid");
    return windowRank(m_query, m_index, it->second, begin, bucketNs, buckets, withTracks);
}

Status ClassShareQuery::forEachUnit(size_t count, int threads,
                                    const std::function<Status(size_t, const Trace&, TimelineQuery&)>& job) {
    constexpr unsigned kMaxWorkers = 8;
    unsigned want = threads > 0 ? unsigned(threads) : std::min(kMaxWorkers, std::thread::hardware_concurrency());
    want = std::max(1u, std::min<unsigned>(want, unsigned(count)));
    auto& pool = m_units->workers;
    if (!m_units->workersOpened || (threads > 0 && pool.size() + 1 < want)) {
        m_units->workersOpened = true;
        const unsigned most = std::max(want, std::min(kMaxWorkers, std::thread::hardware_concurrency()));
        while (pool.size() + 1 < most) {
            auto t = Trace::open(m_trace.path());
            if (!t) break; // fewer workers; the result is the same
            ShareWorker w{std::make_unique<Trace>(std::move(t.value())), nullptr};
            w.query = std::make_unique<TimelineQuery>(*w.trace);
            pool.push_back(std::move(w));
        }
    }
    std::atomic<size_t> next{0};
    std::mutex failMutex;
    Status failed;
    auto work = [&](const Trace& conn, TimelineQuery& query) {
        for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
            Status st = job(i, conn, query);
            if (st.ok()) continue;
            std::lock_guard lock(failMutex);
            failed = st;
            next.store(count); // the others stop at their next unit
        }
    };
    std::vector<std::thread> threadsRunning;
    for (size_t k = 0; k + 1 < want && k < pool.size(); ++k) {
        try {
            threadsRunning.emplace_back(work, std::cref(*pool[k].trace), std::ref(*pool[k].query));
        } catch (const std::system_error&) {
            break; // no thread to be had: the remaining workers take its share
        }
    }
    work(m_trace, m_query);
    for (auto& t : threadsRunning) t.join();
    return failed;
}

Status ClassShareQuery::allRanks(int64_t begin, int64_t bucketNs, int buckets, bool withTracks, int threads,
                                 const std::function<void(RankClassBuckets&&)>& sink) {
    if (bucketNs <= 0 || buckets <= 0) return Status::error("class buckets: empty bucket grid");
    std::vector<const detail::RankUnit*> units;
    for (const auto& [r, u] : m_units->units.units) units.push_back(&u);
    return forEachUnit(units.size(), threads, [&](size_t i, const Trace& conn, TimelineQuery&) -> Status {
        // One statement per worker would do; one per rank costs a prepare per rank, nothing.
        schema::Statement range(detail::db(conn), "SELECT ts, dur, category_id FROM event WHERE id BETWEEN ? AND ? ORDER BY id");
        ClassCache local(m_index);
        auto r = sweepRank(range, local, *units[i], begin, bucketNs, buckets, withTracks);
        if (!r) return r.status();
        sink(std::move(*r));
        return {};
    });
}

Status ClassShareQuery::ranks(const std::vector<int64_t>& ranks, int64_t begin, int64_t bucketNs, int buckets,
                              bool withTracks, const std::function<void(RankClassBuckets&&)>& sink) {
    if (bucketNs <= 0 || buckets <= 0) return Status::error("class buckets: empty bucket grid");
    std::vector<const detail::RankUnit*> units;
    for (int64_t r : ranks) {
        auto it = m_units->units.units.find(r);
        if (it == m_units->units.units.end()) return Status::error("no rank " + std::to_string(r));
        units.push_back(&it->second);
    }
    // One core is left to the caller's UI: on a 2-core machine, two workers slowed every frame
    // painted meanwhile (docs/gui.md, "Speed at scale").
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const int threads = int(std::clamp(cores - 1, 1u, 8u));
    return forEachUnit(units.size(), threads, [&](size_t i, const Trace&, TimelineQuery& query) -> Status {
        auto r = windowRank(query, m_index, *units[i], begin, bucketNs, buckets, withTracks);
        if (!r) return r.status();
        sink(std::move(*r));
        return {};
    });
}

} // namespace hpcprof::analyzer
