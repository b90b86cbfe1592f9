// SPDX-License-Identifier: MIT
#include "models/timeline_fetch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "hpcprof/analyzer/counters.hpp"
#include "models/counter_lanes.hpp"
#include "hpcprof/analyzer/timeline_query.hpp"

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
            d.cls = uint8_t(data.index.categoryClass(a.representativeCategoryId));
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
    for (int64_t id : req.counters) {
        auto info = std::find_if(data.counters.begin(), data.counters.end(),
                                 [&](const CounterTrackInfo& c) { return c.id == id; });
        bool known = info != data.counters.end();
        auto chart = analyzer::counterChart(trace, id, known && info->unit == QLatin1String("ratio"),
                                            req.window.begin, req.window.end, req.resolutionNs,
                                            known ? counterRateCap(*info) : 0);
        if (!chart) return chart.status();
        out->counters[id] = std::move(*chart);
    }
    out->fetchMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return TimelineDataPtr(std::move(out));
}

} // namespace hpcprof::gui
