// SPDX-License-Identifier: MIT
// Phase 2 of drawing: paints the lanes, the time ruler and the minimap from an already fetched
// draw list. Never touches the trace, so it is cheap enough for every frame and runs the same on
// a widget or an offscreen QImage (the pixel tests and the benchmark paint into images).
#pragma once

#include <QPainter>
#include <QRect>
#include <optional>
#include <unordered_set>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "models/lane_layout.hpp"
#include "models/timeline_fetch.hpp"

namespace hpcprof::gui {

struct PaintState {
    int scrollY = 0;
    int64_t selectedEvent = -1;
    const std::unordered_set<int64_t>* matches = nullptr; ///< search hits, outlined
    std::vector<int64_t> highlightedRanks;                ///< ranks of the active finding
    analyzer::Severity highlightSeverity = analyzer::Severity::Warning; ///< the active finding's
    std::optional<TimeWindow> rangeSelection;
    int64_t hoverEvent = -1;
};

class TimelinePainter {
public:
    /// Width of the lane-name column left of the time area.
    static constexpr int kGutter = 170;
    static constexpr int kRulerHeight = 22;

    /// Paints the lanes into `area` (gutter on the left, then the time area of axis.width()).
    static void paintLanes(QPainter& p, const QRect& area, const TimeAxis& axis, const LaneLayout& layout,
                           const TraceData& trace, const TimelineData* data, const PaintState& state);
    /// The time ruler (ticks and labels) over the time area of `area`.
    static void paintRuler(QPainter& p, const QRect& area, const TimeAxis& axis);
    /// The whole run: one thin strip per rank of its dominant class over time (the analyzer's
    /// overview), and the visible window as a frame.
    static void paintMinimap(QPainter& p, const QRect& area, const TimeAxis& axis,
                             const analyzer::Analysis* analysis);
    /// Tick spacing for a ruler of this scale: 1, 2 or 5 x 10^k ns, about 100 px apart.
    static int64_t tickStep(double nsPerPixel);
    /// The item under time-area pixel (x, y) (y relative to the lanes' top, before scrolling).
    static const DrawItem* itemAt(const TimelineData* data, const LaneLayout& layout, const TimeAxis& axis,
                                  double x, int y, int64_t* trackOut = nullptr);
};

} // namespace hpcprof::gui
