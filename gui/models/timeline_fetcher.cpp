// SPDX-License-Identifier: MIT
#include "models/timeline_fetcher.hpp"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QTimer>
#include <QtConcurrent>
#include <algorithm>

namespace hpcprof::gui {

namespace {
struct FetchOutcome {
    TimelineDataPtr data;
    QString error;
};

/// `fresh` plus whatever of `old` it does not replace.
TimelineDataPtr mergeKeeping(const TimelineData& fresh, const TimelineData* old) {
    auto merged = std::make_shared<TimelineData>(fresh);
    if (!old) return merged;
    for (const auto& [id, draw] : old->tracks) merged->tracks.emplace(id, draw);
    for (const auto& [id, pts] : old->counters) merged->counters.emplace(id, pts);
    for (const auto& [id, strip] : old->groups) merged->groups.emplace(id, strip);
    return merged;
}

bool containsAll(const std::vector<int64_t>& have, const std::vector<int64_t>& want) {
    for (int64_t id : want)
        if (std::find(have.begin(), have.end(), id) == have.end()) return false;
    return true;
}
} // namespace

TimelineFetcher::TimelineFetcher(QObject* parent) : QObject(parent) {
    // One thread: the trace connection is single-threaded and jobs are in order anyway.
    m_pool.setMaxThreadCount(1);
    m_pool.setExpiryTimeout(-1);
}

TimelineFetcher::~TimelineFetcher() { m_pool.waitForDone(); }

void TimelineFetcher::setTrace(TraceDataPtr data) {
    m_trace = std::move(data);
    m_wanted->store(0); // chunks still queued for the previous trace are skipped
    m_data.reset();
    m_haveReq.reset();
    m_pending.reset();
}

bool TimelineFetcher::covers(const FetchRequest& have, TimeWindow visible, int64_t res,
                             const std::vector<int64_t>& tracks, const std::vector<int64_t>& counters) const {
    return have.resolutionNs == res && have.window.begin <= visible.begin && have.window.end >= visible.end &&
           containsAll(have.tracks, tracks) && containsAll(have.counters, counters) &&
           containsAll(have.groups, m_wantGroups) && have.mipmap == m_mipmap;
}

bool TimelineFetcher::request(TimeWindow visible, double nsPerPixel, const std::vector<int64_t>& tracks,
                              const std::vector<int64_t>& counters) {
    if (!m_trace) return false;
    const int64_t res = quantizedResolution(nsPerPixel);
    if (m_pending && covers(*m_pending, visible, res, tracks, counters)) return true;
    if (!m_pending && m_inflight && covers(*m_inflight, visible, res, tracks, counters)) return true;
    if (!m_busy && m_haveReq && covers(*m_haveReq, visible, res, tracks, counters)) return false;

    FetchRequest req;
    req.resolutionNs = res;
    const TimeWindow b = m_trace->bounds;
    int64_t begin = std::max(b.begin, visible.begin - visible.span());
    int64_t end = std::min(b.end, visible.end + visible.span());
    // Snap to whole buckets so the folded marks of overlapping fetches line up.
    begin -= ((begin % res) + res) % res;
    end += (res - ((end % res) + res) % res) % res;
    req.window = {begin, std::max(end, begin + 1)};
    req.tracks = tracks;
    req.counters = counters;
    req.groups = m_wantGroups;
    req.mipmap = m_mipmap;
    if (m_busy) {
        m_pending = std::move(req);
        m_wanted->store(0); // the running request's remaining chunks are not needed any more
    } else {
        start(std::move(req));
    }
    return true;
}

void TimelineFetcher::start(FetchRequest req) {
    m_busy = true;
    m_inflight = req;
    const uint64_t gen = ++m_generation;
    m_wanted->store(gen);
    TraceDataPtr trace = m_trace;
    const uint64_t session = trace->sessionId;
    // Summary rows first (a screen of ranks answers first), then the lanes, top first.
    std::vector<FetchRequest> chunks;
    for (size_t i = 0; i < req.groups.size(); i += kChunkGroups) {
        FetchRequest c = req;
        c.tracks.clear();
        c.counters.clear();
        c.groups.assign(req.groups.begin() + std::ptrdiff_t(i),
                        req.groups.begin() + std::ptrdiff_t(std::min(i + kChunkGroups, req.groups.size())));
        chunks.push_back(std::move(c));
    }
    const size_t groupChunks = chunks.size();
    for (size_t i = 0; i < req.tracks.size() || chunks.size() == groupChunks; i += kChunkTracks) {
        FetchRequest c = req;
        c.groups.clear();
        c.tracks.assign(req.tracks.begin() + std::ptrdiff_t(std::min(i, req.tracks.size())),
                        req.tracks.begin() + std::ptrdiff_t(std::min(i + kChunkTracks, req.tracks.size())));
        if (chunks.size() > groupChunks) c.counters.clear(); // counters ride with the first lanes
        chunks.push_back(std::move(c));
    }
    m_chunksLeft = chunks.size();
    auto wanted = m_wanted;
    for (FetchRequest& c : chunks) {
        auto* watcher = new QFutureWatcher<FetchOutcome>(this);
        connect(watcher, &QFutureWatcher<FetchOutcome>::finished, this, [this, watcher, session, gen] {
            FetchOutcome o = watcher->result();
            watcher->deleteLater();
            chunkFinished(o.data, o.error, session, gen);
        });
        // The pool runs jobs in submission order on its one thread: top lanes first.
        watcher->setFuture(QtConcurrent::run(&m_pool, [trace, c = std::move(c), wanted, gen]() {
            FetchOutcome o;
            if (wanted->load() != gen) return o; // superseded: skip the remaining chunks
            auto r = fetchTimeline(*trace, c);
            if (r)
                o.data = *r;
            else
                o.error = QString::fromStdString(r.status().message());
            return o;
        }));
    }
}

void TimelineFetcher::chunkFinished(TimelineDataPtr data, QString error, uint64_t session, uint64_t generation) {
    // Results for a trace that has since been replaced, or for a superseded request, are dropped.
    const bool current = m_trace && m_trace->sessionId == session && generation == m_generation &&
                         m_wanted->load() == generation;
    if (current && data) {
        // Merge: this chunk's lanes replace their old draw lists; the others keep theirs until
        // their chunk arrives (no blank lanes while zooming).
        m_data = mergeKeeping(*data, m_data.get());
        emit dataReady();
    }
    if (current && !error.isEmpty()) emit fetchFailed(error);
    if (generation != m_generation || --m_chunksLeft > 0) return;
    if (current && error.isEmpty()) m_haveReq = m_inflight;
    m_inflight.reset();
    if (m_pending && m_trace) {
        FetchRequest next = std::move(*m_pending);
        m_pending.reset();
        start(std::move(next));
        return;
    }
    m_busy = false;
    emit idle();
}

bool TimelineFetcher::waitUntilIdle(int ms) {
    QElapsedTimer t;
    t.start();
    while (m_busy && t.elapsed() < ms) {
        QEventLoop loop;
        QTimer::singleShot(20, &loop, &QEventLoop::quit);
        connect(this, &TimelineFetcher::idle, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return !m_busy;
}

} // namespace hpcprof::gui
