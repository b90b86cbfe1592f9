// SPDX-License-Identifier: MIT
#include "models/timeline_fetch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

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

namespace {

/// Draw list of one track from the level-of-detail range query.
Result<std::shared_ptr<TrackDraw>> trackItems(const TraceData& data, analyzer::TimelineQuery& query,
                                              const FetchRequest& req, int64_t trackId) {
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
    return tdp;
}

/// Summary rows finer than the mipmap: the ranks' class shares over the fetched window, in
/// buckets of half the resolution (about 1.5 pixels); the ranks of the request in one batch
/// over the class-share workers.
Status fineGroups(const TraceData& data, const FetchRequest& req, TimelineData& out) {
    auto q = threadClassShares(data);
    if (!q) return q.status();
    const int64_t bucketNs = std::max<int64_t>(1, req.resolutionNs / 2);
    const int buckets = int(std::max<int64_t>(1, (req.window.span() + bucketNs - 1) / bucketNs));
    std::unordered_map<int64_t, std::vector<int64_t>> pidsOf; // by rank
    std::vector<int64_t> ranks;
    for (int64_t pid : req.groups)
        if (auto rank = (*q)->rankOfProcess(pid)) {
            auto& pids = pidsOf[*rank];
            if (pids.empty()) ranks.push_back(*rank);
            pids.push_back(pid);
        }
    std::mutex mutex;
    return (*q)->ranks(ranks, req.window.begin, bucketNs, buckets, false, [&](analyzer::RankClassBuckets&& rb) {
        auto strip = std::make_shared<ShareStrip>(toShareStrip(rb.summary));
        std::lock_guard lock(mutex);
        for (int64_t pid : pidsOf.at(rb.rank)) out.groups[pid] = strip;
    });
}

/// The summary rows and, where the mipmap is fine enough, the tracks' shares; returns the
/// mipmap when it serves this resolution (null otherwise).
Result<ClassMipmapPtr> fetchShares(const TraceData& data, const FetchRequest& req, TimelineData& out) {
    if (!req.mipmap || (req.groups.empty() && req.tracks.empty())) return ClassMipmapPtr();
    auto mip = threadClassMipmap(data);
    if (!mip) return mip.status();
    const bool coarse = (*mip)->bucketNs <= req.resolutionNs;
    if (!coarse) {
        HPCPROF_RETURN_IF_ERROR(fineGroups(data, req, out));
        return ClassMipmapPtr();
    }
    for (int64_t pid : req.groups)
        if (auto it = (*mip)->groups.find(pid); it != (*mip)->groups.end()) out.groups[pid] = it->second;
    return *mip;
}

/// A track with more than two events per resolution bucket on average: its events would fold
/// into marks, so its class shares say more. Sparser tracks keep their events (names, nesting).
bool denseTrack(const TraceData& data, const FetchRequest& req, int64_t trackId) {
    const analyzer::TrackInfo* t = data.track(trackId);
    if (!t || data.bounds.span() <= 0) return false;
    const double inWindow = double(t->eventCount) * double(req.window.span()) / double(data.bounds.span());
    const double buckets = double(req.window.span()) / double(std::max<int64_t>(1, req.resolutionNs));
    return inWindow > 2 * buckets;
}

ShareStripPtr mipmapShares(const ClassMipmap* m, int64_t trackId) {
    auto it = m->tracks.find(trackId);
    return it == m->tracks.end() ? nullptr : it->second;
}

/// Sets the compute span of a CPU rank's main thread: its process's life.
Status markComputeGaps(const TraceData& data, int64_t trackId, TrackDraw& td) {
    auto q = threadClassShares(data);
    if (!q) return q.status();
    if (!(*q)->gapsAreCompute(trackId)) return {};
    const analyzer::TrackInfo* t = data.track(trackId);
    for (const auto& p : data.index.processes())
        if (t && p.id == t->processId) td.computeSpan = TimeWindow{p.startTs, p.endTs.value_or(data.bounds.end)};
    return {};
}

} // namespace

Result<TimelineDataPtr> fetchTimeline(const TraceData& data, const FetchRequest& req) {
    auto start = std::chrono::steady_clock::now();
    auto traceR = threadTrace(data);
    if (!traceR) return traceR.status();
    const analyzer::Trace& trace = **traceR;
    auto queryR = threadTimelineQuery(data);
    if (!queryR) return queryR.status();
    auto out = std::make_shared<TimelineData>();
    out->window = req.window;
    out->resolutionNs = req.resolutionNs;
    auto mip = fetchShares(data, req, *out);
    if (!mip) return mip.status();
    const ClassMipmap* m = mip->get();
    for (int64_t trackId : req.tracks) {
        ShareStripPtr shares = m ? mipmapShares(m, trackId) : nullptr;
        // Its events would only fold: the shares alone, unless they show nothing (annotations).
        if (shares && !shares->onlyIdle && denseTrack(data, req, trackId)) {
            auto td = std::make_shared<TrackDraw>();
            td->shares = std::move(shares);
            out->tracks[trackId] = std::move(td);
            continue;
        }
        auto td = trackItems(data, **queryR, req, trackId);
        if (!td) return td.status();
        (*td)->shares = std::move(shares); // drawn under the events
        if (!(*td)->shares && req.mipmap) HPCPROF_RETURN_IF_ERROR(markComputeGaps(data, trackId, **td));
        out->items += int64_t((*td)->items.size());
        out->tracks[trackId] = std::move(*td);
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
