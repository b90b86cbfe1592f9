// SPDX-License-Identifier: MIT
#include "models/timeline_painter.hpp"

#include "models/counter_lanes.hpp"

#include <QFontMetrics>
#include <QImage>
#include <QPolygonF>
#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/class_colors.hpp"
#include "models/format.hpp"
#include "models/severity_colors.hpp"

namespace hpcprof::gui {

namespace {

using ItemIt = std::vector<DrawItem>::const_iterator;
constexpr int kRowHeight = LaneLayout::kRowHeight;

QColor textColorFor(const QColor& bg) { return bg.lightness() > 150 ? Qt::black : Qt::white; }

/// What every lane of one paintLanes call shares: its arguments, and what is worked out once
/// per frame (font metrics, the fill of each event class, the left edge and width of the time
/// area).
struct LanesPaint {
    QPainter& p;
    const QRect& area;
    const TimeAxis& axis;
    const TraceData& trace;
    const TimelineData* data; ///< null until the first fetch: names and rules only
    const PaintState& st;
    QFontMetrics fm;
    std::vector<QColor> fills;
    int x0;
    double width;
    int headerH; ///< the groups' header (summary row) height
    std::vector<int64_t> columnEdges; ///< start time of each pixel column of the time area, and its end
};

std::vector<int64_t> columnEdges(const TimeAxis& axis) {
    std::vector<int64_t> edges(size_t(std::max(0, int(axis.width()))) + 1);
    for (size_t x = 0; x < edges.size(); ++x) edges[x] = axis.pixelToTime(double(x));
    return edges;
}

std::vector<QColor> classFills() {
    std::vector<QColor> fills(kEventClassCount);
    for (int c = 0; c < kEventClassCount; ++c)
        fills[size_t(c)] = classColor(analyzer::EventClass(c));
    return fills;
}

constexpr int kFindingMarkWidth = 4;
const QColor kCpuUseColor = cpuUseColor();   ///< a CPU-use lane's utilisation
const QColor kCpuWaitColor = cpuWaitColor(); ///< and the time waiting for a CPU above it

// ---- groups and lane frames --------------------------------------------------------------

/// Bottom of group `g` (its header alone when it has no lanes), in area pixels.
int groupBottom(const LanesPaint& c, const LaneGroup& g, int gy) {
    return g.lanes.empty() ? gy + c.headerH
                           : c.area.top() + g.lanes.back().y + g.lanes.back().height - c.st.scrollY;
}

/// True when the group's rank is one of the active finding's.
bool isHighlighted(const LanesPaint& c, const LaneGroup& g) {
    const auto& hl = c.st.highlightedRanks;
    return g.rank && std::find(hl.begin(), hl.end(), *g.rank) != hl.end();
}

/// A header's gutter: tinted in the active finding's severity colour when its rank is marked.
QColor headerBackground(const LanesPaint& c, bool highlighted) {
    return highlighted ? severityTint(c.st.highlightSeverity) : QColor(0xe3, 0xe8, 0xee);
}

/// The mark of a rank of the active finding: a bar in its severity's colour at the gutter's left.
void paintFindingMark(const LanesPaint& c, int gy, int h) {
    c.p.fillRect(QRect(c.area.left(), gy, kFindingMarkWidth, h), severityColor(c.st.highlightSeverity));
}

// ---- class shares (summary rows, lanes at mipmap resolution) ---------------------------------

/// Stacking order of the classes, bottom up: compute first, idle last (on top).
constexpr analyzer::TimeClass kStack[] = {
    analyzer::TimeClass::Compute, analyzer::TimeClass::Setup, analyzer::TimeClass::Communication,
    analyzer::TimeClass::Io,      analyzer::TimeClass::Memory, analyzer::TimeClass::Sync,
    analyzer::TimeClass::Idle};

/// Rows this tall or more stack the classes in each pixel column; lower rows blend them into
/// one colour (the heat map of many ranks).
constexpr int kStackMinHeight = 8;

/// One pixel column of `h` pixels (top to bottom in `px`, stride `stride`): the classes stacked
/// in proportion to their shares (rounded cumulatively, so the column's class heights add up),
/// the uncovered rest in `rest`.
void stackColumn(const double* sh, const QRgb* colors, QRgb rest, int h, uint32_t* px, int stride) {
    int filled = 0;
    double cum = 0;
    for (analyzer::TimeClass c : kStack) {
        cum += sh[int(c)];
        const int to = std::min(h, int(cum * h + 0.5));
        for (; filled < to; ++filled) px[(h - 1 - filled) * stride] = colors[int(c)];
    }
    for (; filled < h; ++filled) px[(h - 1 - filled) * stride] = rest;
}

/// One pixel column as one colour: the classes' colours mixed by share.
QRgb blendColumn(const double* sh, const QRgb* colors, QRgb rest) {
    double r = 0, g = 0, b = 0, cum = 0;
    for (int k = 0; k < analyzer::kTimeClassCount; ++k) {
        r += sh[k] * qRed(colors[k]);
        g += sh[k] * qGreen(colors[k]);
        b += sh[k] * qBlue(colors[k]);
        cum += sh[k];
    }
    const double o = std::max(0.0, 1.0 - cum);
    return qRgb(int(r + o * qRed(rest) + 0.5), int(g + o * qGreen(rest) + 0.5), int(b + o * qBlue(rest) + 0.5));
}

/// The colours of the time classes; idle as `background` unless `idle`.
void timeClassColors(QRgb* colors, bool idle, QRgb background) {
    for (int k = 0; k < analyzer::kTimeClassCount; ++k)
        colors[k] = timeClassColor(analyzer::TimeClass(k)).rgb();
    if (!idle) colors[int(analyzer::TimeClass::Idle)] = background;
}

/// Pixel column x of a row too low to stack the classes: one colour mixed from their shares.
/// A heat-map row of a rank takes the precomputed mix of the bucket at the column's centre.
QRgb columnColor(const LanesPaint& c, const ShareStrip& strip, int x, bool idle, const QRgb* colors, QRgb background) {
    const std::vector<int64_t>& edges = c.columnEdges;
    if (idle && strip.blend.size() == size_t(strip.buckets)) {
        const int64_t mid = edges[size_t(x)] + (edges[size_t(x) + 1] - edges[size_t(x)]) / 2 - strip.begin;
        const int64_t b = mid / strip.bucketNs;
        return mid >= 0 && b < strip.buckets ? strip.blend[size_t(b)] : background;
    }
    double sh[analyzer::kTimeClassCount];
    strip.sharesIn(edges[size_t(x)], edges[size_t(x) + 1], sh);
    return blendColumn(sh, colors, background);
}

/// The share rows painted in the last view (window and width): a repaint of the same view (a
/// fetch chunk arriving, the pointer moving, a scroll, a finding selected) draws the row images
/// again instead of measuring every pixel column of every row. Keyed by what a row's pixels
/// depend on: its strip(s) (by serial), height, idle flag and background. GUI thread only.
class RowImageCache {
public:
    struct Key {
        uint64_t strips; ///< a strip's serial, or a hash of a shared row's members' serials
        int h;
        bool idle;
        QRgb background;
        bool operator==(const Key&) const = default;
    };
    /// Forgets every row when the view changed since the last frame.
    void beginFrame(const std::vector<int64_t>& edges) {
        if (edges == m_edges && m_rows.size() < kMaxRows) return;
        m_edges = edges;
        m_rows.clear();
    }
    const QImage* find(const Key& k) const {
        auto it = m_rows.find(k);
        return it == m_rows.end() ? nullptr : &it->second;
    }
    void put(const Key& k, QImage img) { m_rows.insert_or_assign(k, std::move(img)); }

private:
    static constexpr size_t kMaxRows = 4096;
    struct Hash {
        size_t operator()(const Key& k) const {
            return std::hash<uint64_t>()(k.strips * 31 + uint64_t(k.h) * 7 + k.idle) ^ std::hash<uint32_t>()(k.background);
        }
    };
    std::vector<int64_t> m_edges;
    std::unordered_map<Key, QImage, Hash> m_rows;
};

RowImageCache& rowCache() {
    static RowImageCache cache;
    return cache;
}

/// Draws the cached image of `key` at (x0, y), or renders it with `render` first.
template <class Render> void paintCachedRow(const LanesPaint& c, const RowImageCache::Key& key, int y, Render&& render) {
    if (const QImage* img = rowCache().find(key)) return c.p.drawImage(QPoint(c.x0, y), *img);
    QImage img = render();
    c.p.drawImage(QPoint(c.x0, y), img);
    rowCache().put(key, std::move(img));
}

/// The class shares of `strip` over the time area at rows [y, y + h): each pixel column shows
/// the share of each class in its time span. `idle` paints the idle class (summary rows) or
/// leaves it as the background (lanes: a thread's gaps).
QImage renderShares(const LanesPaint& c, const ShareStrip& strip, int h, bool idle, QRgb background);

void paintShares(const LanesPaint& c, const ShareStrip& strip, int y, int h, bool idle, QRgb background) {
    if (int(c.width) <= 0 || h <= 0) return;
    paintCachedRow(c, {strip.serial, h, idle, background}, y, [&] { return renderShares(c, strip, h, idle, background); });
}

QImage renderShares(const LanesPaint& c, const ShareStrip& strip, int h, bool idle, QRgb background) {
    const int w = int(c.width);
    QRgb colors[analyzer::kTimeClassCount];
    timeClassColors(colors, idle, background);
    QImage img(w, h, QImage::Format_RGB32);
    const int stride = int(img.bytesPerLine() / 4);
    auto* bits = reinterpret_cast<uint32_t*>(img.bits());
    double sh[analyzer::kTimeClassCount];
    const std::vector<int64_t>& edges = c.columnEdges;
    for (int x = 0; x < w && x + 1 < int(edges.size()); ++x) {
        if (h < kStackMinHeight) {
            const QRgb v = columnColor(c, strip, x, idle, colors, background);
            for (int yy = 0; yy < h; ++yy) bits[yy * stride + x] = v;
            continue;
        }
        strip.sharesIn(edges[size_t(x)], edges[size_t(x) + 1], sh);
        stackColumn(sh, colors, background, h, bits + x, stride);
    }
    return img;
}

/// The group's header: its title in the gutter (highlighted when its rank is one of the active
/// finding's) and its rank's summary row (class mix over time) in the time area.
void paintGroupHeader(const LanesPaint& c, const LaneGroup& g, int gy) {
    const bool highlighted = isHighlighted(c, g);
    const QColor bg = headerBackground(c, highlighted);
    const int h = c.headerH;
    const ShareStrip* strip = nullptr;
    if (c.data)
        if (auto it = c.data->groups.find(g.processId); it != c.data->groups.end()) strip = it->second.get();
    // The summary row covers the time area: only the gutter needs the header's colour then.
    c.p.fillRect(QRect(c.area.left(), gy, strip ? c.x0 - c.area.left() : c.area.width(), h), bg);
    if (strip) paintShares(c, *strip, gy, h, true, bg.rgb());
    if (highlighted) paintFindingMark(c, gy, h);
    if (h < 9) return; // a heat-map row: no room for a title
    c.p.setPen(Qt::black);
    const QString title = (g.collapsed ? QStringLiteral("\u25b8 ") : QStringLiteral("\u25be ")) + g.title;
    const int tw = strip ? TimelinePainter::kGutter - 6 : c.area.width() - 8;
    c.p.drawText(QRect(c.area.left() + 4, gy, tw, h), Qt::AlignVCenter | Qt::AlignLeft,
                 c.fm.elidedText(title, Qt::ElideRight, tw));
}

/// One pixel row shared by several folded ranks (more ranks than pixel rows): each column the
/// mean of the members' mixed colours, i.e. the colour of their mean class shares (the mix is
/// linear), so a row shows what its ranks spent the time on together. Members without data yet
/// count as the background.
QImage renderSharedRow(const LanesPaint& c, const LaneGroup* const* members, size_t n, QRgb background);

void paintSharedRow(const LanesPaint& c, const LaneGroup* const* members, size_t n, int gy) {
    bool highlighted = false;
    for (size_t i = 0; i < n; ++i) highlighted |= isHighlighted(c, *members[i]);
    const QColor bg = headerBackground(c, highlighted);
    c.p.fillRect(QRect(c.area.left(), gy, c.x0 - c.area.left(), c.headerH), bg);
    if (highlighted) paintFindingMark(c, gy, c.headerH);
    if (int(c.width) <= 0 || !c.data) return;
    uint64_t strips = n;
    for (size_t i = 0; i < n; ++i) {
        auto it = c.data->groups.find(members[i]->processId);
        strips = strips * 1000003 + (it == c.data->groups.end() ? 0 : it->second->serial);
    }
    paintCachedRow(c, {strips, c.headerH, true, bg.rgb()}, gy, [&] { return renderSharedRow(c, members, n, bg.rgb()); });
}

QImage renderSharedRow(const LanesPaint& c, const LaneGroup* const* members, size_t n, QRgb background) {
    const int w = int(c.width);
    const QColor bg = QColor::fromRgb(background);
    QRgb colors[analyzer::kTimeClassCount];
    timeClassColors(colors, true, bg.rgb());
    std::vector<double> sum(size_t(w) * 3, 0.0);
    for (size_t i = 0; i < n; ++i) {
        auto it = c.data->groups.find(members[i]->processId);
        const ShareStrip* strip = it == c.data->groups.end() ? nullptr : it->second.get();
        for (int x = 0; x < w && x + 1 < int(c.columnEdges.size()); ++x) {
            const QRgb v = strip ? columnColor(c, *strip, x, true, colors, bg.rgb()) : bg.rgb();
            sum[size_t(x) * 3] += qRed(v), sum[size_t(x) * 3 + 1] += qGreen(v), sum[size_t(x) * 3 + 2] += qBlue(v);
        }
    }
    QImage img(w, c.headerH, QImage::Format_RGB32);
    for (int x = 0; x < w; ++x) {
        const double* s = &sum[size_t(x) * 3];
        const QRgb v = qRgb(int(s[0] / double(n) + 0.5), int(s[1] / double(n) + 0.5), int(s[2] / double(n) + 0.5));
        for (int yy = 0; yy < c.headerH; ++yy) img.setPixel(x, yy, v);
    }
    return img;
}

/// The lane's name in the gutter and the line under the lane.
void paintLaneFrame(const LanesPaint& c, const Lane& lane, int ly) {
    c.p.setPen(QColor(0x40, 0x40, 0x40));
    c.p.drawText(QRect(c.area.left() + 14, ly, TimelinePainter::kGutter - 18, kRowHeight),
                 Qt::AlignVCenter | Qt::AlignLeft,
                 c.fm.elidedText(lane.name, Qt::ElideMiddle, TimelinePainter::kGutter - 18));
    c.p.setPen(QColor(0xdd, 0xdd, 0xdd));
    c.p.drawLine(c.area.left(), ly + lane.height - 1, c.area.right(), ly + lane.height - 1);
}

// ---- counter lanes -----------------------------------------------------------------------

/// A counter lane: its rate over time as an area chart scaled to the lane's maximum, labelled
/// with that maximum. Nothing when the counter has no positive value in the fetched window.
/// The value of a step chart at time t: the last point at or before it (0 before the first);
/// `i` walks forward with increasing t.
double stepValue(const std::vector<analyzer::CounterPoint>& pts, size_t& i, int64_t t) {
    while (i < pts.size() && pts[i].ts <= t) ++i;
    return i == 0 ? 0.0 : pts[i - 1].value;
}

const CounterTrackInfo* counterInfo(const TraceData& trace, int64_t id) {
    auto info = std::find_if(trace.counters.begin(), trace.counters.end(),
                             [&](const CounterTrackInfo& t) { return t.id == id; });
    return info == trace.counters.end() ? nullptr : &*info;
}

/// A counter lane's scale on the second line of its gutter, under its name: painted in the time
/// area it covered the chart's first columns.
void paintGutterNote(const LanesPaint& c, int ly, const QString& text) {
    const int w = TimelinePainter::kGutter - 18;
    c.p.save();
    QFont f = c.p.font();
    f.setPointSizeF(f.pointSizeF() * 0.85); // a second line in a 26-pixel lane
    c.p.setFont(f);
    c.p.setPen(QColor(0x60, 0x60, 0x60));
    c.p.drawText(QRect(c.area.left() + 14, ly + kRowHeight - 4, w, LaneLayout::kCounterHeight - kRowHeight + 4),
                 Qt::AlignLeft | Qt::AlignVCenter, QFontMetrics(f).elidedText(text, Qt::ElideRight, w));
    c.p.restore();
}

/// A CPU-use lane: per pixel column the thread's utilisation from the bottom (teal) and its time
/// waiting for a CPU stacked above it (orange), both on a fixed scale of one CPU (100 %), the
/// label giving the largest of each in view.
void paintCpuUseLane(const LanesPaint& c, const Lane& lane, int ly) {
    static const std::vector<analyzer::CounterPoint> kNone;
    auto u = c.data->counters.find(lane.id), w = c.data->counters.find(lane.stackId);
    const auto& use = u == c.data->counters.end() ? kNone : u->second;
    const auto& wait = w == c.data->counters.end() ? kNone : w->second;
    const CounterTrackInfo* info = counterInfo(c.trace, lane.id);
    if (!info || (use.empty() && wait.empty())) return;
    const double full = counterRateCap(*info) > 0 ? counterRateCap(*info) : 1.0; // ns/s, or a ratio
    const int h = LaneLayout::kCounterHeight - 2, width = int(c.width);
    size_t iu = 0, iw = 0;
    double maxUse = 0, maxWait = 0;
    // Nothing after the last sample (the thread's end), as the area charts.
    const int64_t tEnd = std::max(use.empty() ? INT64_MIN : use.back().ts, wait.empty() ? INT64_MIN : wait.back().ts);
    for (int x = 0; x < width && x + 1 < int(c.columnEdges.size()) && c.columnEdges[size_t(x)] <= tEnd; ++x) {
        const int64_t t = c.columnEdges[size_t(x)];
        const double uv = stepValue(use, iu, t), wv = stepValue(wait, iw, t);
        maxUse = std::max(maxUse, uv), maxWait = std::max(maxWait, wv);
        const auto [hu, hw] = cpuUseHeights(uv, wv, full, h);
        if (hu > 0) c.p.fillRect(QRect(c.x0 + x, ly + h - hu, 1, hu), kCpuUseColor);
        if (hw > 0) c.p.fillRect(QRect(c.x0 + x, ly + h - hu - hw, 1, hw), kCpuWaitColor);
    }
    // The lane's name gives the unit (% CPU): the note gives the figures.
    auto figure = [&](double v) { return formatCounterValue(*info, v).remove(QStringLiteral(" CPU")); };
    paintGutterNote(c, ly, QStringLiteral("max use %1, wait %2").arg(figure(maxUse), figure(maxWait)));
}

void paintCounterLane(const LanesPaint& c, const Lane& lane, int ly) {
    if (lane.stackId >= 0) return paintCpuUseLane(c, lane, ly);
    auto it = c.data->counters.find(lane.id);
    if (it == c.data->counters.end() || it->second.empty()) return;
    const auto& points = it->second;
    double maxRate = 0;
    for (const auto& pt : points) maxRate = std::max(maxRate, pt.value);
    if (maxRate <= 0) return;
    const double h = LaneLayout::kCounterHeight - 2, base = ly + h;
    QPolygonF poly;
    poly << QPointF(c.x0 + std::max(0.0, c.axis.timeToPixel(points.front().ts)), base);
    for (const auto& pt : points) {
        double x = c.x0 + std::clamp(c.axis.timeToPixel(pt.ts), -1.0, c.width + 1);
        poly << QPointF(x, base - h * std::max(0.0, pt.value) / maxRate);
    }
    poly << QPointF(poly.back().x(), base);
    c.p.setPen(QColor(0x00, 0x79, 0x6b));
    c.p.setBrush(QColor(0x00, 0x96, 0x88, 150));
    c.p.drawPolygon(poly);
    c.p.setBrush(Qt::NoBrush);
    c.p.setPen(QColor(0x30, 0x30, 0x30));
    auto info = std::find_if(c.trace.counters.begin(), c.trace.counters.end(),
                             [&](const CounterTrackInfo& t) { return t.id == lane.id; });
    QString label = info == c.trace.counters.end() ? QString::number(maxRate, 'g', 3)
                                                   : formatCounterValue(*info, maxRate);
    paintGutterNote(c, ly, QStringLiteral("max %1").arg(label));
}

// ---- event lanes -------------------------------------------------------------------------

/// Narrow neighbours on one row merge into one mark: at any zoom at most about
/// width / kFoldPixels rectangles per row are drawn. Empty when b < a.
struct FoldRun {
    double a = 0, b = -1;
    int depth = -1;
    uint8_t cls = 0;
};

/// Draws the pending run, if any, and empties it.
void flushRun(const LanesPaint& c, int ly, FoldRun& run) {
    if (run.b < run.a) return;
    const int y = ly + run.depth * kRowHeight + 1;
    c.p.fillRect(QRectF(c.x0 + run.a, y, std::max(1.0, run.b - run.a), kRowHeight - 2),
                 c.fills[run.cls % kEventClassCount]);
    run.b = run.a - 1;
}

/// Adds the narrow item of depth `d` spanning pixels [a, b] to the run, or starts a new run
/// with it (drawing the old one) when it does not touch the run.
void foldIntoRun(const LanesPaint& c, int ly, FoldRun& run, const DrawItem& d, double a, double b) {
    if (run.b >= run.a && run.depth == d.depth && a <= run.b + 1) {
        run.b = std::max(run.b, std::max(a + 1, b));
    } else {
        flushRun(c, ly, run);
        run = {a, std::max(a + 1, b), d.depth, d.cls};
    }
}

/// The outline of a selected, matched or hovered item (selection wins, then the search hit).
void paintItemOutline(const LanesPaint& c, const DrawItem& d, const QRectF& r) {
    const bool match = c.st.matches && c.st.matches->count(d.eventId);
    if (d.eventId == c.st.selectedEvent || match || d.eventId == c.st.hoverEvent) {
        c.p.setPen(QPen(d.eventId == c.st.selectedEvent ? Qt::black
                        : match                         ? QColor(0xff, 0xd6, 0x00)
                                                        : QColor(0x55, 0x55, 0x55),
                        2));
        c.p.drawRect(r.adjusted(1, 1, -1, -1));
    }
}

/// An item wide enough for a rectangle of its own (pixels [a, b], row top y): its fill, its
/// name when there is room (never on a folded mark) and its outline.
void paintWideItem(const LanesPaint& c, const DrawItem& d, double a, double b, int y) {
    const QColor fill = c.fills[d.cls % kEventClassCount];
    QRectF r(c.x0 + a, y, b - a, kRowHeight - 2);
    c.p.fillRect(r, fill);
    if (r.width() > 30 && !d.folded) {
        c.p.setPen(textColorFor(fill));
        QRectF tr = r.intersected(QRectF(c.x0, y, c.width, kRowHeight)).adjusted(3, 0, -2, 0);
        c.p.drawText(tr, Qt::AlignVCenter | Qt::AlignLeft,
                     c.fm.elidedText(QString::fromStdString(c.trace.index.string(d.nameId)), Qt::ElideRight,
                                     int(tr.width())));
    }
    paintItemOutline(c, d, r);
}

/// The items of one depth that may show in the view [tFrom, tTo]: [first, last), and `next`,
/// where the following depth starts. Items are by depth, then ts; the caller's tFrom is early
/// enough by the longest item that every item reaching into the view is included.
struct DepthItems {
    ItemIt first, last, next;
};

DepthItems depthItemsInView(ItemIt cursor, ItemIt end, int64_t tFrom, int64_t tTo) {
    const int depth = cursor->depth;
    auto first = std::lower_bound(cursor, end, std::make_pair(depth, tFrom),
                                  [](const DrawItem& d, const std::pair<int, int64_t>& k) {
                                      return d.depth != k.first ? d.depth < k.first : d.ts < k.second;
                                  });
    auto last = std::upper_bound(first, end, std::make_pair(depth, tTo),
                                 [](const std::pair<int, int64_t>& k, const DrawItem& d) {
                                     return k.first != d.depth ? k.first < d.depth : k.second < d.ts;
                                 });
    auto next = std::upper_bound(last, end, depth,
                                 [](int dd, const DrawItem& d) { return dd < d.depth; });
    return {first, last, next};
}

/// One depth's items of an event lane: wide items as rectangles, narrow ones folded into runs.
void paintDepthItems(const LanesPaint& c, const Lane& lane, int ly, const DepthItems& items,
                     FoldRun& run) {
    for (auto di = items.first; di != items.last; ++di) {
        const DrawItem& d = *di;
        if (d.depth >= lane.rows) continue;
        double a = c.axis.timeToPixel(d.ts), b = c.axis.timeToPixel(d.ts + d.dur);
        if (b < 0 || a > c.width) continue;
        a = std::max(a, -2.0);
        b = std::min(b, c.width + 2);
        const int y = ly + d.depth * kRowHeight + 1;
        if (y > c.area.bottom()) continue;
        if (b - a < kFoldPixels) {
            foldIntoRun(c, ly, run, d, a, b);
            continue;
        }
        flushRun(c, ly, run);
        paintWideItem(c, d, a, b, y);
    }
    flushRun(c, ly, run);
}

/// An event lane: only the items of the view, found by a binary search per depth (the longest
/// item bounds how early a visible one can start).
void paintEventLane(const LanesPaint& c, const Lane& lane, int ly) {
    auto it = c.data->tracks.find(lane.id);
    if (it == c.data->tracks.end()) return;
    // Under the first row's events: the track's class shares (zoomed out), or a CPU rank's main
    // thread's compute (outside its calls it computes).
    if (it->second->shares)
        paintShares(c, *it->second->shares, ly + 1, kRowHeight - 2, false, QColor(0xfa, 0xfa, 0xfa).rgb());
    else if (const auto& span = it->second->computeSpan) {
        const double a = std::max(-1.0, c.axis.timeToPixel(span->begin)), b = std::min(c.width + 1, c.axis.timeToPixel(span->end));
        if (b > a) c.p.fillRect(QRectF(c.x0 + a, ly + 1, b - a, kRowHeight - 2), c.fills[int(analyzer::EventClass::Compute)]);
    }
    const auto& items = it->second->items;
    const int64_t tFrom = c.axis.window().begin - it->second->maxDur - 1, tTo = c.axis.window().end;
    FoldRun run;
    auto cursor = items.begin();
    while (cursor != items.end()) {
        const DepthItems depth = depthItemsInView(cursor, items.end(), tFrom, tTo);
        paintDepthItems(c, lane, ly, depth, run);
        cursor = depth.next;
    }
}

/// A group's header and, unless collapsed, its lanes that reach into the area.
void paintGroup(const LanesPaint& c, const LaneGroup& g, int gy) {
    paintGroupHeader(c, g, gy);
    if (g.collapsed) return;
    for (const auto& lane : g.lanes) {
        const int ly = c.area.top() + lane.y - c.st.scrollY;
        if (ly > c.area.bottom() || ly + lane.height < c.area.top()) continue;
        paintLaneFrame(c, lane, ly);
        if (!c.data) continue;
        if (lane.counter)
            paintCounterLane(c, lane, ly);
        else
            paintEventLane(c, lane, ly);
    }
}

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
    const LanesPaint c{p, area, axis, trace, data, st, QFontMetrics(p.font()), classFills(),
                       area.left() + kGutter, axis.width(), layout.headerHeight(), columnEdges(axis)};
    rowCache().beginFrame(c.columnEdges);
    const auto& groups = layout.groups();
    std::vector<const LaneGroup*> shared; // the folded groups of the current shared row
    for (size_t i = 0; i < groups.size(); ++i) {
        const auto& g = groups[i];
        const int gy = area.top() + g.y - st.scrollY;
        if (g.hidden) continue;
        if (gy > area.bottom()) break;
        if (layout.ranksPerRow() > 1 && g.collapsed) { // painted once the row's last member is seen
            shared.push_back(&g);
            size_t j = i + 1;
            while (j < groups.size() && groups[j].hidden) ++j;
            const bool last = j == groups.size() || !groups[j].collapsed || groups[j].y != g.y;
            if (last && gy + c.headerH >= area.top()) paintSharedRow(c, shared.data(), shared.size(), gy);
            if (last) shared.clear();
            continue;
        }
        if (groupBottom(c, g, gy) < area.top()) continue;
        paintGroup(c, g, gy);
    }
    if (st.rangeSelection) {
        double a = axis.timeToPixel(st.rangeSelection->begin), b = axis.timeToPixel(st.rangeSelection->end);
        p.fillRect(QRectF(c.x0 + a, area.top(), std::max(1.0, b - a), area.height()), QColor(0x20, 0x60, 0xff, 40));
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
