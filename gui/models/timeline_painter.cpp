// SPDX-License-Identifier: MIT
#include "models/timeline_painter.hpp"

#include <QFontMetrics>
#include <QPolygonF>
#include <algorithm>
#include <cmath>

#include "models/class_colors.hpp"
#include "models/format.hpp"

namespace hpcprof::gui {

namespace {
QColor textColorFor(const QColor& bg) { return bg.lightness() > 150 ? Qt::black : Qt::white; }
} // namespace

int64_t TimelinePainter::tickStep(double nsPerPixel) {
    const double want = std::max(1.0, nsPerPixel * 100.0);
    int64_t base = 1;
    while (true) {
        for (int m : {1, 2, 5}) {
            if (double(base * m) >= want) return base * m;
        }
        if (base > (int64_t(1) << 56)) return base;
        base *= 10;
    }
}

void TimelinePainter::paintLanes(QPainter& p, const QRect& area, const TimeAxis& axis, const LaneLayout& layout,
                                 const TraceData& trace, const TimelineData* data, const PaintState& st) {
    p.save();
    p.setClipRect(area);
    p.fillRect(area, QColor(0xfa, 0xfa, 0xfa));
    const int x0 = area.left() + kGutter;
    const double width = axis.width();
    const QFontMetrics fm(p.font());
    std::vector<QColor> fills(kEventClassCount);
    for (int c = 0; c < kEventClassCount; ++c) fills[size_t(c)] = classColor(analyzer::EventClass(c));

    for (const auto& g : layout.groups()) {
        const int gy = area.top() + g.y - st.scrollY;
        if (gy > area.bottom()) break;
        const bool highlighted =
            g.rank && std::find(st.highlightedRanks.begin(), st.highlightedRanks.end(), *g.rank) != st.highlightedRanks.end();
        const int groupBottom = g.lanes.empty() ? gy + LaneLayout::kHeaderHeight
                                                : area.top() + g.lanes.back().y + g.lanes.back().height - st.scrollY;
        if (groupBottom < area.top()) continue;
        p.fillRect(QRect(area.left(), gy, area.width(), LaneLayout::kHeaderHeight),
                   highlighted ? QColor(0xff, 0xe0, 0x82) : QColor(0xe3, 0xe8, 0xee));
        p.setPen(Qt::black);
        p.drawText(QRect(area.left() + 4, gy, area.width() - 8, LaneLayout::kHeaderHeight),
                   Qt::AlignVCenter | Qt::AlignLeft,
                   (g.collapsed ? QStringLiteral("\u25b8 ") : QStringLiteral("\u25be ")) + g.title);
        if (g.collapsed) continue;
        for (const auto& lane : g.lanes) {
            const int ly = area.top() + lane.y - st.scrollY;
            if (ly > area.bottom() || ly + lane.height < area.top()) continue;
            p.setPen(QColor(0x40, 0x40, 0x40));
            p.drawText(QRect(area.left() + 14, ly, kGutter - 18, LaneLayout::kRowHeight),
                       Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(lane.name, Qt::ElideMiddle, kGutter - 18));
            p.setPen(QColor(0xdd, 0xdd, 0xdd));
            p.drawLine(area.left(), ly + lane.height - 1, area.right(), ly + lane.height - 1);
            if (!data) continue;
            if (lane.counter) {
                auto it = data->counters.find(lane.id);
                if (it == data->counters.end() || it->second.empty()) continue;
                double maxRate = 0;
                for (const auto& c : it->second) maxRate = std::max(maxRate, c.value);
                if (maxRate <= 0) continue;
                const double h = LaneLayout::kCounterHeight - 2, base = ly + h;
                QPolygonF poly;
                poly << QPointF(x0 + std::max(0.0, axis.timeToPixel(it->second.front().ts)), base);
                for (const auto& c : it->second) {
                    double x = x0 + std::clamp(axis.timeToPixel(c.ts), -1.0, width + 1);
                    poly << QPointF(x, base - h * std::max(0.0, c.value) / maxRate);
                }
                poly << QPointF(poly.back().x(), base);
                p.setPen(QColor(0x00, 0x79, 0x6b));
                p.setBrush(QColor(0x00, 0x96, 0x88, 150));
                p.drawPolygon(poly);
                p.setBrush(Qt::NoBrush);
                p.setPen(QColor(0x30, 0x30, 0x30));
                p.drawText(QRect(x0 + 4, ly, 200, 12), Qt::AlignLeft | Qt::AlignTop,
                           QStringLiteral("max %1/s").arg(maxRate, 0, 'g', 3));
                continue;
            }
            auto it = data->tracks.find(lane.id);
            if (it == data->tracks.end()) continue;
            // Narrow neighbours on one row merge into one mark: at any zoom at most about
            // width / kFoldPixels rectangles per row are drawn.
            struct Run { double a = 0, b = -1; int depth = -1; uint8_t cls = 0; } run;
            auto flush = [&] {
                if (run.b < run.a) return;
                const int y = ly + run.depth * LaneLayout::kRowHeight + 1;
                p.fillRect(QRectF(x0 + run.a, y, std::max(1.0, run.b - run.a), LaneLayout::kRowHeight - 2),
                           fills[run.cls % kEventClassCount]);
                run.b = run.a - 1;
            };
            // Only the items of the view: binary search per depth (items are by depth, then
            // ts; the longest item bounds how early a visible one can start).
            const auto& items = it->second->items;
            const int64_t tFrom = axis.window().begin - it->second->maxDur - 1, tTo = axis.window().end;
            auto cursor = items.begin();
            while (cursor != items.end()) {
                const int depth = cursor->depth;
                auto first = std::lower_bound(cursor, items.end(), std::make_pair(depth, tFrom),
                                              [](const DrawItem& d, const std::pair<int, int64_t>& k) {
                                                  return d.depth != k.first ? d.depth < k.first : d.ts < k.second;
                                              });
                auto last = std::upper_bound(first, items.end(), std::make_pair(depth, tTo),
                                             [](const std::pair<int, int64_t>& k, const DrawItem& d) {
                                                 return k.first != d.depth ? k.first < d.depth : k.second < d.ts;
                                             });
                cursor = std::upper_bound(last, items.end(), depth,
                                          [](int dd, const DrawItem& d) { return dd < d.depth; });
            for (auto di = first; di != last; ++di) {
                const DrawItem& d = *di;
                if (d.depth >= lane.rows) continue;
                double a = axis.timeToPixel(d.ts), b = axis.timeToPixel(d.ts + d.dur);
                if (b < 0 || a > width) continue;
                a = std::max(a, -2.0);
                b = std::min(b, width + 2);
                const int y = ly + d.depth * LaneLayout::kRowHeight + 1;
                if (y > area.bottom()) continue;
                if (b - a < kFoldPixels) {
                    if (run.b >= run.a && run.depth == d.depth && a <= run.b + 1) {
                        run.b = std::max(run.b, std::max(a + 1, b));
                    } else {
                        flush();
                        run = {a, std::max(a + 1, b), d.depth, d.cls};
                    }
                    continue;
                }
                flush();
                const QColor fill = fills[d.cls % kEventClassCount];
                QRectF r(x0 + a, y, b - a, LaneLayout::kRowHeight - 2);
                p.fillRect(r, fill);
                if (r.width() > 30 && !d.folded) {
                    p.setPen(textColorFor(fill));
                    QRectF tr = r.intersected(QRectF(x0, y, width, LaneLayout::kRowHeight)).adjusted(3, 0, -2, 0);
                    p.drawText(tr, Qt::AlignVCenter | Qt::AlignLeft,
                               fm.elidedText(QString::fromStdString(trace.index.string(d.nameId)), Qt::ElideRight,
                                             int(tr.width())));
                }
                const bool match = st.matches && st.matches->count(d.eventId);
                if (d.eventId == st.selectedEvent || match || d.eventId == st.hoverEvent) {
                    p.setPen(QPen(d.eventId == st.selectedEvent ? Qt::black
                                  : match                       ? QColor(0xff, 0xd6, 0x00)
                                                                : QColor(0x55, 0x55, 0x55),
                                  2));
                    p.drawRect(r.adjusted(1, 1, -1, -1));
                }
            }
            flush();
            }
        }
    }
    if (st.rangeSelection) {
        double a = axis.timeToPixel(st.rangeSelection->begin), b = axis.timeToPixel(st.rangeSelection->end);
        p.fillRect(QRectF(x0 + a, area.top(), std::max(1.0, b - a), area.height()), QColor(0x20, 0x60, 0xff, 40));
    }
    p.restore();
}

void TimelinePainter::paintRuler(QPainter& p, const QRect& area, const TimeAxis& axis) {
    p.save();
    p.fillRect(area, QColor(0xf0, 0xf0, 0xf0));
    const int x0 = area.left() + kGutter;
    const int64_t step = tickStep(axis.nsPerPixel());
    int64_t t = axis.window().begin - ((axis.window().begin % step) + step) % step;
    p.setPen(QColor(0x30, 0x30, 0x30));
    for (; t <= axis.window().end; t += step) {
        double x = x0 + axis.timeToPixel(t);
        if (x < x0) continue;
        p.drawLine(QPointF(x, area.bottom() - 6), QPointF(x, area.bottom()));
        p.drawText(QPointF(x + 3, area.bottom() - 8), formatTick(t, step));
    }
    p.drawText(QRect(area.left() + 4, area.top(), kGutter - 8, area.height()), Qt::AlignVCenter | Qt::AlignLeft,
               formatDuration(axis.window().span()));
    p.restore();
}

void TimelinePainter::paintMinimap(QPainter& p, const QRect& area, const TimeAxis& axis,
                                   const analyzer::Analysis* analysis) {
    p.save();
    p.fillRect(area, QColor(0xe8, 0xe8, 0xe8));
    const int x0 = area.left() + kGutter;
    const double w = area.width() - kGutter;
    const TimeWindow b = axis.bounds();
    p.setPen(Qt::black);
    p.drawText(QRect(area.left() + 4, area.top(), kGutter - 8, area.height()), Qt::AlignVCenter, QStringLiteral("whole run"));
    if (analysis && !analysis->ranks.empty() && analysis->summary.wallNs > 0) {
        const int n = int(analysis->ranks.size());
        const double rowH = double(area.height()) / n;
        for (int r = 0; r < n; ++r) {
            const auto& rb = analysis->ranks[size_t(r)];
            const int buckets = int(rb.overview.size());
            if (!buckets) continue;
            // Overview buckets split the analysis window; map them onto the trace bounds.
            const double wb = double(analysis->summary.windowBegin), ww = double(analysis->summary.wallNs);
            for (int k = 0; k < buckets; ++k) {
                double tb = wb + ww * k / buckets, te = wb + ww * (k + 1) / buckets;
                double xa = (tb - double(b.begin)) / double(b.span()) * w, xb = (te - double(b.begin)) / double(b.span()) * w;
                p.fillRect(QRectF(x0 + xa, area.top() + r * rowH, std::max(1.0, xb - xa), std::max(1.0, rowH)),
                           timeClassColor(analyzer::TimeClass(rb.overview[size_t(k)])));
            }
        }
    }
    double a = double(axis.window().begin - b.begin) / double(b.span()) * w;
    double e = double(axis.window().end - b.begin) / double(b.span()) * w;
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(x0 + a, area.top() + 1, std::max(2.0, e - a), area.height() - 2));
    p.restore();
}

const DrawItem* TimelinePainter::itemAt(const TimelineData* data, const LaneLayout& layout, const TimeAxis& axis,
                                        double x, int y, int64_t* trackOut) {
    if (!data) return nullptr;
    LaneLayout::Hit h = layout.hitTest(y);
    if (h.lane < 0 || h.row < 0) return nullptr;
    const Lane& lane = layout.groups()[size_t(h.group)].lanes[size_t(h.lane)];
    if (lane.counter) return nullptr;
    auto it = data->tracks.find(lane.id);
    if (it == data->tracks.end()) return nullptr;
    const int64_t t = axis.pixelToTime(x);
    const int64_t slack = int64_t(axis.nsPerPixel() * 2); // narrow marks are hard to hit
    const DrawItem* best = nullptr;
    for (const DrawItem& d : it->second->items) {
        if (d.depth != h.row) continue;
        if (t >= d.ts - slack && t <= d.ts + d.dur + slack) {
            if (!best || d.dur > best->dur) best = &d;
        }
    }
    if (best && trackOut) *trackOut = lane.id;
    return best;
}

} // namespace hpcprof::gui
