// SPDX-License-Identifier: MIT
// The timeline's mapping between trace time (ns) and pixels, with zoom and pan kept inside the
// trace's bounds. Pure arithmetic, no Qt: unit-tested on its own.
#pragma once

#include <cstdint>

namespace hpcprof::gui {

/// A visible time window [begin, end) in ns.
struct TimeWindow {
    int64_t begin = 0, end = 0;
    int64_t span() const { return end - begin; }
    bool operator==(const TimeWindow&) const = default;
};

class TimeAxis {
public:
    /// Narrowest window one can zoom into (a few ns per screen would be meaningless).
    static constexpr int64_t kMinSpanNs = 100;

    /// The whole trace [begin, end); the view starts showing all of it.
    void setBounds(TimeWindow bounds);
    /// Width of the drawing area in pixels (>= 1).
    void setWidth(double pixels);
    /// Shows `w`, clamped to the bounds and to at least kMinSpanNs.
    void setWindow(TimeWindow w);

    const TimeWindow& bounds() const { return m_bounds; }
    const TimeWindow& window() const { return m_window; }
    double width() const { return m_width; }
    double nsPerPixel() const { return double(m_window.span()) / m_width; }

    double timeToPixel(int64_t t) const { return double(t - m_window.begin) / nsPerPixel(); }
    int64_t pixelToTime(double x) const;

    /// Zooms by `factor` (< 1 zooms in) keeping the time under pixel `anchorX` in place.
    void zoom(double factor, double anchorX);
    /// Moves the view by `dx` pixels (positive: later times come into view).
    void panPixels(double dx);

private:
    TimeWindow m_bounds{0, 1};
    TimeWindow m_window{0, 1};
    double m_width = 1;
};

} // namespace hpcprof::gui
