// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/timeline_query.hpp"
#include "trace_access.hpp"

#include <algorithm>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::analyzer {

Result<TimelineSlices> TimelineQuery::slices(int64_t trackId, int64_t t0, int64_t t1, int64_t resolutionNs) {
    sqlite3* db = detail::db(m_trace);
    TimelineSlices out;
    schema::Statement tr(db, "SELECT first_event_id, last_event_id FROM track WHERE id = ?");
    tr.bind(1, trackId);
    if (!tr.step()) return tr.error().ok() ? Status::error("no track " + std::to_string(trackId)) : tr.error();
    if (tr.isNull(0) || tr.isNull(1) || t1 <= t0) return out;
    const int64_t first = tr.int64(0), last = tr.int64(1);

    auto md = m_maxDur.find(trackId);
    if (md == m_maxDur.end()) {
        schema::Statement s(db, "SELECT COALESCE(MAX(dur), 0) FROM event WHERE id BETWEEN ? AND ?");
        s.bind(1, first);
        s.bind(2, last);
        md = m_maxDur.emplace(trackId, s.step() ? std::max<int64_t>(0, s.int64(0)) : 0).first;
    }

    schema::Statement tsOf(db, "SELECT ts FROM event WHERE id = ?");
    // Smallest id in [first, last + 1] whose ts >= t (ids sorted by ts within the track).
    auto lowerBound = [&](int64_t t) {
        int64_t lo = first, hi = last + 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            tsOf.reset();
            tsOf.bind(1, mid);
            ++out.pointLookups;
            int64_t ts = tsOf.step() ? tsOf.int64(0) : INT64_MAX;
            if (ts < t)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    };
    const int64_t from = lowerBound(t0 - md->second);
    const int64_t to = lowerBound(t1); // exclusive
    if (from >= to) return out;

    schema::Statement s(db, "SELECT id, ts, dur, depth, name_id, category_id FROM event"
                            " WHERE id BETWEEN ? AND ? ORDER BY id");
    s.bind(1, from);
    s.bind(2, to - 1);
    std::map<std::pair<int32_t, int64_t>, TimelineAggregate> buckets;
    while (s.step()) {
        TimelineSlice e;
        e.eventId = s.int64(0);
        e.ts = s.int64(1);
        e.dur = std::max<int64_t>(0, s.int64(2));
        e.depth = int32_t(s.int64(3));
        e.nameId = s.int64(4);
        e.categoryId = int32_t(s.int64(5));
        if (e.ts + e.dur < t0 || (e.ts + e.dur == t0 && e.dur > 0)) continue; // ended before the window
        if (resolutionNs <= 0 || e.dur >= resolutionNs) {
            out.slices.push_back(e);
            continue;
        }
        int64_t bucket = t0 + ((std::max(e.ts, t0) - t0) / resolutionNs) * resolutionNs;
        TimelineAggregate& a = buckets[{e.depth, bucket}];
        a.depth = e.depth;
        a.bucketBegin = bucket;
        ++a.count;
        if (a.count == 1 || e.dur > a.maxDur) {
            a.maxDur = e.dur;
            a.representativeId = e.eventId;
            a.representativeCategoryId = e.categoryId;
        }
    }
    if (!s.error().ok()) return s.error();
    for (auto& [k, a] : buckets) out.aggregates.push_back(a);
    return out;
}

Result<TimelineSlices> timelineSlices(const Trace& trace, int64_t trackId, int64_t t0, int64_t t1,
                                      int64_t resolutionNs) {
    TimelineQuery q(trace);
    return q.slices(trackId, t0, t1, resolutionNs);
}

} // namespace hpcprof::analyzer
