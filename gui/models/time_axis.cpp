// SPDX-License-Identifier: MIT
#include "models/time_axis.hpp"

#include <algorithm>
#include <cmath>

namespace hpcprof::gui {

void TimeAxis::setBounds(TimeWindow bounds) {
    if (bounds.end <= bounds.begin) bounds.end = bounds.begin + 1;
    m_bounds = bounds;
    m_window = bounds;
}

void TimeAxis::setWidth(double pixels) { m_width = std::max(1.0, pixels); }

void TimeAxis::setWindow(TimeWindow w) {
    const int64_t maxSpan = m_bounds.span();
    const int64_t minSpan = std::min<int64_t>(kMinSpanNs, maxSpan);
    int64_t span = std::clamp<int64_t>(w.span(), minSpan, maxSpan);
    int64_t center = w.begin + w.span() / 2;
    int64_t begin = center - span / 2;
    // Keep the window inside the bounds by sliding it, never by shrinking it.
    begin = std::clamp<int64_t>(begin, m_bounds.begin, m_bounds.end - span);
    m_window = {begin, begin + span};
}

int64_t TimeAxis::pixelToTime(double x) const {
    return m_window.begin + int64_t(std::llround(x * nsPerPixel()));
}

void TimeAxis::zoom(double factor, double anchorX) {
    if (factor <= 0) return;
    const double anchorT = double(m_window.begin) + anchorX * nsPerPixel();
    double span = std::max(1.0, double(m_window.span()) * factor);
    const double frac = std::clamp(anchorX / m_width, 0.0, 1.0);
    span = std::clamp(span, double(std::min<int64_t>(kMinSpanNs, m_bounds.span())), double(m_bounds.span()));
    int64_t begin = int64_t(std::llround(anchorT - frac * span));
    int64_t s = int64_t(std::llround(span));
    begin = std::clamp<int64_t>(begin, m_bounds.begin, m_bounds.end - s);
    m_window = {begin, begin + s};
}

void TimeAxis::panPixels(double dx) {
    int64_t shift = int64_t(std::llround(dx * nsPerPixel()));
    int64_t span = m_window.span();
    int64_t begin = std::clamp<int64_t>(m_window.begin + shift, m_bounds.begin, m_bounds.end - span);
    m_window = {begin, begin + span};
}

} // namespace hpcprof::gui
