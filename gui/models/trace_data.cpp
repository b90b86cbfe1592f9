// SPDX-License-Identifier: MIT
#include "models/trace_data.hpp"

#include <algorithm>
#include <atomic>
#include <map>

#include "hpcprof/schema/sqlite.hpp"

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
    sqlite3* db = trace->db();

    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& p : data->index.processes()) {
        lo = std::min(lo, p.startTs);
        if (p.endTs) hi = std::max(hi, *p.endTs);
        if (p.rank) ++data->rankCount;
    }
    // First and last event of each track by primary key: the events are sorted by ts within a
    // track, so the first starts earliest; the last one's end is a good upper bound (a longer
    // earlier event is caught by the process end).
    schema::Statement ev(db, "SELECT ts, dur FROM event WHERE id = ?");
    for (const auto& t : data->index.tracks()) {
        if (!t.firstEventId || !t.lastEventId) continue;
        for (int64_t id : {*t.firstEventId, *t.lastEventId}) {
            ev.reset();
            ev.bind(1, id);
            if (!ev.step()) continue;
            lo = std::min(lo, ev.int64(0));
            hi = std::max(hi, ev.int64(0) + std::max<int64_t>(0, ev.int64(1)));
        }
    }
    if (lo == INT64_MAX) lo = 0;
    if (hi <= lo) hi = lo + 1;
    data->bounds = {lo, hi};
    data->events = data->index.eventCount();

    schema::Statement ct(db, "SELECT id, process_id, name, unit FROM counter_track ORDER BY id");
    while (ct.step())
        data->counters.push_back({ct.int64(0), ct.int64(1), QString::fromStdString(ct.text(2)),
                                  QString::fromStdString(ct.text(3))});
    schema::Statement st(db, "SELECT name, severity, value, description FROM stats_view WHERE value != 0");
    while (st.step())
        data->stats.push_back({QString::fromStdString(st.text(0)), QString::fromStdString(st.text(1)),
                               QString::fromStdString(st.text(3)), st.int64(2)});
    if (!ct.error().ok()) return ct.error();
    if (!st.error().ok()) return st.error();
    return TraceDataPtr(std::move(data));
}

namespace {
struct ThreadConnection {
    std::unique_ptr<analyzer::Trace> trace;
    std::unique_ptr<analyzer::TimelineQuery> query;
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

} // namespace hpcprof::gui
