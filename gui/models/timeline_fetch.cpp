// SPDX-License-Identifier: MIT
#include "models/timeline_fetch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "hpcprof/analyzer/timeline_query.hpp"
#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::gui {

int64_t quantizedResolution(double nsPerPixel) {
    double want = std::max(1.0, nsPerPixel * kFoldPixels);
    int64_t r = 1;
    while (double(r) < want && r < (int64_t(1) << 60)) r <<= 1;
    return r;
}

Result<TimelineDataPtr> fetchTimeline(const TraceData& data, const FetchRequest& req) {
    auto start = std::chrono::steady_clock::now();
    auto traceR = threadTrace(data);
    if (!traceR) return traceR.status();
    const analyzer::Trace& trace = **traceR;
    auto queryR = threadTimelineQuery(data);
    if (!queryR) return queryR.status();
    analyzer::TimelineQuery& query = **queryR;
    auto out = std::make_shared<TimelineData>();
    out->window = req.window;
    out->resolutionNs = req.resolutionNs;
    // The analyzer's aggregates carry the longest event's id, not its class: one primary-key
    // read each (bounded by lanes x visible buckets) gives the folded mark its colour.
    schema::Statement catOf(trace.db(), "SELECT category_id FROM event WHERE id = ?");
    for (int64_t trackId : req.tracks) {
        auto r = query.slices(trackId, req.window.begin, req.window.end, req.resolutionNs);
        if (!r) return r.status();
        auto tdp = std::make_shared<TrackDraw>();
        TrackDraw& td = *tdp;
        td.items.reserve(r->slices.size() + r->aggregates.size());
        for (const auto& s : r->slices) {
            DrawItem d;
            d.ts = s.ts;
            d.dur = s.dur;
            d.eventId = s.eventId;
            d.nameId = s.nameId;
            d.depth = s.depth;
            d.cls = uint8_t(data.index.categoryClass(s.categoryId));
            td.items.push_back(d);
            td.maxDepth = std::max(td.maxDepth, s.depth);
        }
        for (const auto& a : r->aggregates) {
            DrawItem d;
            d.ts = a.bucketBegin;
            d.dur = std::max(a.maxDur, req.resolutionNs);
            d.eventId = a.representativeId;
            d.depth = a.depth;
            d.count = int32_t(std::min<int64_t>(a.count, INT32_MAX));
            d.folded = true;
            catOf.reset();
            catOf.bind(1, a.representativeId);
            d.cls = uint8_t(catOf.step() ? data.index.categoryClass(catOf.int64(0)) : analyzer::EventClass::Annotation);
            td.items.push_back(d);
            td.maxDepth = std::max(td.maxDepth, a.depth);
        }
        // By depth, then time: the painter merges neighbouring narrow marks per row.
        std::sort(td.items.begin(), td.items.end(), [](const DrawItem& a, const DrawItem& b) {
            return a.depth != b.depth ? a.depth < b.depth : a.ts < b.ts;
        });
        for (const DrawItem& d : td.items) td.maxDur = std::max(td.maxDur, d.dur);
        out->items += int64_t(td.items.size());
        out->tracks[trackId] = std::move(tdp);
    }
    if (!req.counters.empty()) {
        // Samples are running totals: the lane shows their rate, one point per bucket (the
        // largest rate in it, so short bursts stay visible when zoomed out).
        schema::Statement cs(trace.db(), "SELECT ts, value FROM counter WHERE counter_track_id = ?"
                                         " AND ts >= ? AND ts <= ? ORDER BY ts");
        for (int64_t id : req.counters) {
            cs.reset();
            cs.bind(1, id);
            cs.bind(2, req.window.begin - req.resolutionNs);
            cs.bind(3, req.window.end + req.resolutionNs);
            auto& pts = out->counters[id];
            bool have = false;
            int64_t prevTs = 0;
            double prevV = 0;
            while (cs.step()) {
                int64_t ts = cs.int64(0);
                double v = cs.real(1);
                if (have && ts > prevTs) {
                    double rate = (v - prevV) * 1e9 / double(ts - prevTs);
                    int64_t bucket = prevTs - (prevTs % req.resolutionNs);
                    if (!pts.empty() && pts.back().ts == bucket)
                        pts.back().rate = std::max(pts.back().rate, rate);
                    else
                        pts.push_back({bucket, rate});
                }
                have = true;
                prevTs = ts;
                prevV = v;
            }
            if (!cs.error().ok()) return cs.error();
        }
    }
    out->fetchMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return TimelineDataPtr(std::move(out));
}

} // namespace hpcprof::gui
