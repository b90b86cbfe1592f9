// SPDX-License-Identifier: MIT
// Phase 1 of drawing (Tracy's preprocess): turns the analyzer's level-of-detail range queries
// (TimelineQuery) into a compact draw list per lane. Runs on a worker thread; the result is
// immutable and shared with the UI thread, whose paint only walks it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/counters.hpp"
#include "models/class_mipmap.hpp"
#include "models/time_axis.hpp"
#include "models/trace_data.hpp"

namespace hpcprof::gui {

/// A slice to draw, or (folded) a run of events narrower than the resolution.
struct DrawItem {
    int64_t ts = 0, dur = 0;
    int64_t eventId = 0; ///< the event, or the longest event of a folded run
    int64_t nameId = 0;
    int32_t depth = 0;
    int32_t count = 1;   ///< events folded into this mark
    uint8_t cls = 0;     ///< analyzer::EventClass
    bool folded = false;
};

struct TrackDraw {
    std::vector<DrawItem> items; ///< by depth, then ts
    int maxDepth = 0;
    int64_t maxDur = 0;          ///< longest item: bounds the binary search of a view
    /// At resolutions the class mipmap covers: the track's class shares, drawn instead of items
    /// (which are then empty).
    ShareStripPtr shares;
    /// A CPU rank's main thread: where it is outside any event (within its process's life) it
    /// computes, so its first row is compute-coloured under the events.
    std::optional<TimeWindow> computeSpan;
};


struct FetchRequest {
    TimeWindow window;      ///< fetched window (wider than the visible one)
    int64_t resolutionNs = 1;
    std::vector<int64_t> tracks, counters;
    std::vector<int64_t> groups; ///< process ids of the summary rows to fetch
    bool mipmap = true;          ///< false: events only, no summary rows (the benchmark's "before")
};

struct TimelineData {
    TimeWindow window;
    int64_t resolutionNs = 1;
    std::unordered_map<int64_t, std::shared_ptr<const TrackDraw>> tracks; ///< shared between fetches
    /// Counter lanes: analyzer::counterChart per bucket (rate of a running total, or a level).
    std::unordered_map<int64_t, std::vector<analyzer::CounterPoint>> counters;
    /// Summary rows: the class shares of each group's rank (by process id).
    std::unordered_map<int64_t, ShareStripPtr> groups;
    int64_t items = 0;
    double fetchMs = 0;
};

using TimelineDataPtr = std::shared_ptr<const TimelineData>;

/// Fetches the draw lists for `request` through the calling thread's trace connection.
Result<TimelineDataPtr> fetchTimeline(const TraceData& data, const FetchRequest& request);

/// Resolution for a view of `nsPerPixel`: the power of two at or above the width of
/// kFoldPixels, so nearby zoom levels share one fetch.
int64_t quantizedResolution(double nsPerPixel);
/// Events narrower than this many pixels are folded into one mark (Tracy's MinVisSize).
inline constexpr double kFoldPixels = 3.0;

} // namespace hpcprof::gui
