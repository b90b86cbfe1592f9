// SPDX-License-Identifier: MIT
#include "models/trace_data.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <unordered_map>

#include "hpcprof/analyzer/counters.hpp"
#include "hpcprof/analyzer/event_query.hpp"

namespace hpcprof::gui {

int64_t TraceData::rankOf(int64_t processId) const {
    for (const auto& p : index.processes())
        if (p.id == processId) return p.rank.value_or(-1);
    return -1;
}

const analyzer::TrackInfo* TraceData::track(int64_t trackId) const {
    for (const auto& t : index.tracks())
        if (t.id == trackId) return &t;
    return nullptr;
}

bool TraceData::hasDataLoss() const {
    return std::any_of(stats.begin(), stats.end(),
                       [](const StatRow& s) { return s.severity != QLatin1String("info"); });
}

Result<TraceDataPtr> loadTraceData(const std::string& path) {
    static std::atomic<uint64_t> s_nextSession{1};
    auto trace = analyzer::Trace::open(path);
    if (!trace) return trace.status();
    auto index = analyzer::TraceIndex::load(*trace);
    if (!index) return index.status();
    auto data = std::make_shared<TraceData>();
    data->path = path;
    data->sessionId = s_nextSession++;
    data->index = std::move(*index);
    for (const auto& p : data->index.processes())
        if (p.rank) ++data->rankCount;
    auto bounds = analyzer::traceTimeBounds(*trace, data->index);
    if (!bounds) return bounds.status();
    data->bounds = {bounds->begin, bounds->end};
    data->events = data->index.eventCount();

    auto counters = analyzer::counterTracks(*trace);
    if (!counters) return counters.status();
    std::unordered_map<int64_t, int64_t> pidOf;
    for (const auto& p : data->index.processes()) pidOf[p.id] = p.pid;
    for (const auto& c : *counters)
        data->counters.push_back({c.id, c.processId, QString::fromStdString(c.name),
                                  QString::fromStdString(c.unit), c.tid.has_value(),
                                  c.tid && *c.tid == pidOf[c.processId]});
    // Lanes in the order the store wrote them (process, thread, counter).
    std::sort(data->counters.begin(), data->counters.end(),
              [](const CounterTrackInfo& a, const CounterTrackInfo& b) { return a.id < b.id; });
    auto stats = analyzer::traceStats(*trace);
    if (!stats) return stats.status();
    for (const auto& st : *stats)
        data->stats.push_back({QString::fromStdString(st.name), QString::fromStdString(st.severity),
                               QString::fromStdString(st.description), st.value});
    return TraceDataPtr(std::move(data));
}

namespace {
struct ThreadConnection {
    std::unique_ptr<analyzer::Trace> trace;
    std::unique_ptr<analyzer::TimelineQuery> query;
    std::unique_ptr<analyzer::ClassShareQuery> shares; ///< made on first use
    ClassMipmapPtr mipmap;                             ///< read or built on first use
};

Result<ThreadConnection*> threadConnection(const TraceData& data) {
    // A handful of traces per thread at most: the oldest connection is closed first.
    thread_local std::map<uint64_t, ThreadConnection> t_open;
    auto it = t_open.find(data.sessionId);
    if (it != t_open.end()) return &it->second;
    auto trace = analyzer::Trace::open(data.path);
    if (!trace) return trace.status();
    if (t_open.size() >= 4) t_open.erase(t_open.begin());
    ThreadConnection& c = t_open[data.sessionId];
    c.trace = std::make_unique<analyzer::Trace>(std::move(*trace));
    c.query = std::make_unique<analyzer::TimelineQuery>(*c.trace);
    return &c;
}
} // namespace

Result<const analyzer::Trace*> threadTrace(const TraceData& data) {
    auto c = threadConnection(data);
    if (!c) return c.status();
    return static_cast<const analyzer::Trace*>((*c)->trace.get());
}

Result<analyzer::TimelineQuery*> threadTimelineQuery(const TraceData& data) {
    auto c = threadConnection(data);
    if (!c) return c.status();
    return (*c)->query.get();
}

Result<analyzer::ClassShareQuery*> threadClassShares(const TraceData& data) {
    auto c = threadConnection(data);
    if (!c) return c.status();
    ThreadConnection& tc = **c;
    if (!tc.shares) {
        auto q = analyzer::ClassShareQuery::open(*tc.trace, data.index);
        if (!q) return q.status();
        tc.shares = std::move(*q);
    }
    return tc.shares.get();
}

Result<ClassMipmapPtr> threadClassMipmap(const TraceData& data) {
    auto c = threadConnection(data);
    if (!c) return c.status();
    ThreadConnection& tc = **c;
    if (tc.mipmap) return tc.mipmap;
    // Kept by the conversion (or an earlier opening) and still the trace's: no event is read.
    if (auto kept = readMipmapCache(data.path)) {
        tc.mipmap = std::move(kept);
        return tc.mipmap;
    }
    auto q = threadClassShares(data);
    if (!q) return q.status();
    const auto start = std::chrono::steady_clock::now();
    auto built = analyzer::buildClassSummary(**q, data.index, data.bounds.begin, data.bounds.end);
    if (!built) return built.status();
    analyzer::writeClassSummary(data.path, *built); // best effort: a read-only folder keeps it in memory
    auto m = mipmapOf(std::move(*built));
    m->buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    tc.mipmap = std::move(m);
    return tc.mipmap;
}

} // namespace hpcprof::gui
