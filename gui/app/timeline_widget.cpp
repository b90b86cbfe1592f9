// SPDX-License-Identifier: MIT
#include "timeline_widget.hpp"

#include <QHelpEvent>
#include <QStringList>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>

#include "models/class_colors.hpp"
#include "models/format.hpp"

namespace hpcprof::gui {

namespace {
constexpr double kKeyZoom = 0.8;   // W/S: 20 % per press, as in Perfetto
constexpr double kKeyPan = 0.1;    // A/D: a tenth of the view per press
constexpr int kScrollWidth = 14;
constexpr int kDragThreshold = 4;  // pixels before a press becomes a drag
} // namespace

TimelineWidget::TimelineWidget(ZoomStack* zoom, QWidget* parent)
    : QWidget(parent), m_zoom(zoom), m_scroll(new QScrollBar(Qt::Vertical, this)) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setMinimumSize(400, 200);
    setAttribute(Qt::WA_OpaquePaintEvent);
    m_state.matches = &m_matches;
    connect(m_scroll, &QScrollBar::valueChanged, this, [this](int v) {
        m_state.scrollY = v;
        requestData();
        update();
    });
    connect(&m_fetcher, &TimelineFetcher::dataReady, this, &TimelineWidget::dataArrived);
    connect(m_zoom, &ZoomStack::zoomChanged, this, [this](TimeWindow w) {
        if (w == m_axis.window()) return;
        m_axis.setWindow(w);
        requestData();
        update();
        emit windowChanged(m_axis.window());
    });
}

void TimelineWidget::setTrace(TraceDataPtr data) {
    m_data = std::move(data);
    m_analysis.reset();
    m_state = PaintState{};
    m_state.matches = &m_matches;
    m_matches.clear();
    m_fetcher.setTrace(m_data);
    m_layout = LaneLayout{};
    m_shownCounters.reset();
    m_userLayout = false;
    if (m_data) {
        m_layout.build(*m_data);
        m_layout.fitTo(lanesRect().height());
        m_axis.setBounds(m_data->bounds);
    }
    updateAxisWidth();
    updateScrollRange();
    m_scroll->setValue(0);
    m_zoom->reset(m_axis.window());
    requestData();
    update();
}

void TimelineWidget::setShownCounters(std::optional<QSet<QString>> names) {
    m_shownCounters = std::move(names);
    if (!m_data) return;
    m_layout = LaneLayout{};
    m_layout.build(*m_data, m_shownCounters);
    updateScrollRange();
    requestData();
    update();
}

void TimelineWidget::setAnalysis(AnalysisPtr analysis) {
    m_analysis = std::move(analysis);
    update();
}

QRect TimelineWidget::lanesRect() const {
    return QRect(0, TimelinePainter::kRulerHeight, width() - kScrollWidth,
                 height() - TimelinePainter::kRulerHeight - kMinimapHeight);
}

QRect TimelineWidget::minimapRect() const {
    return QRect(0, height() - kMinimapHeight, width() - kScrollWidth, kMinimapHeight);
}

void TimelineWidget::updateAxisWidth() {
    m_axis.setWidth(std::max(1, width() - kScrollWidth - TimelinePainter::kGutter));
}

void TimelineWidget::updateScrollRange() {
    const int h = lanesRect().height();
    m_scroll->setGeometry(width() - kScrollWidth, lanesRect().top(), kScrollWidth, h);
    m_scroll->setRange(0, std::max(0, m_layout.totalHeight() - h));
    m_scroll->setPageStep(std::max(1, h));
    m_scroll->setSingleStep(LaneLayout::kRowHeight * 2);
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
    updateAxisWidth();
    // Until the user folds or unfolds a rank, the first screen keeps showing every rank.
    if (m_data && !m_userLayout) m_layout.fitTo(lanesRect().height());
    m_axis.setWindow(m_axis.window());
    updateScrollRange();
    requestData();
}

void TimelineWidget::requestData() {
    if (!m_data) return;
    const int h = lanesRect().height();
    // Half a screen of lanes above and below, so small scrolls do not wait for data; more would
    // delay the first paint (each lane costs a range query).
    const int y0 = m_state.scrollY - h / 2, y1 = m_state.scrollY + h + h / 2;
    m_fetcher.setGroups(m_layout.visibleGroups(y0, y1));
    m_fetcher.request(m_axis.window(), m_axis.nsPerPixel(), m_layout.visibleTracks(y0, y1),
                      m_layout.visibleCounters(y0, y1));
}

void TimelineWidget::dataArrived() {
    TimelineDataPtr d = m_fetcher.data();
    bool grew = false;
    for (const auto& [track, draw] : d->tracks) grew |= m_layout.growRows(track, draw->maxDepth + 1);
    if (grew) {
        // Nested lanes learn their depth only now: fit again, or the rows that grew push the
        // last ranks off the first screen (rows only grow, so this settles).
        if (!m_userLayout) m_layout.fitTo(lanesRect().height());
        updateScrollRange();
        requestData(); // lanes moved: the visible set may have changed
    }
    update();
}

void TimelineWidget::axisChanged(bool record) {
    if (record)
        m_zoom->push(m_axis.window());
    else
        m_zoom->replace(m_axis.window());
    requestData();
    update();
    emit windowChanged(m_axis.window());
}

void TimelineWidget::showWindow(TimeWindow w, bool record) {
    m_axis.setWindow(w);
    axisChanged(record);
}

void TimelineWidget::zoomToFit() { showWindow(m_axis.bounds(), true); }

void TimelineWidget::zoomAt(double factor, double anchorX) {
    m_axis.zoom(factor, anchorX);
    axisChanged(false);
}

void TimelineWidget::selectEvent(int64_t eventId) {
    m_state.selectedEvent = eventId;
    update();
}

void TimelineWidget::revealEvent(int64_t ts, int64_t dur, int64_t trackId) {
    TimeWindow w = m_axis.window();
    if (dur * 2 > w.span() || ts < w.begin || ts + dur > w.end) {
        // Small events get a view a few times their length; large ones fit.
        int64_t span = std::max<int64_t>({dur * 4, TimeAxis::kMinSpanNs * 10, 1000});
        if (dur * 2 <= w.span()) span = std::max(span, w.span());
        w = {ts + dur / 2 - span / 2, ts + dur / 2 + span / 2};
        showWindow(w, true);
    }
    scrollToTrack(trackId);
}

void TimelineWidget::setMatches(std::unordered_set<int64_t> ids) {
    m_matches = std::move(ids);
    update();
}

void TimelineWidget::setHighlightedRanks(std::vector<int64_t> ranks, analyzer::Severity severity) {
    m_state.highlightedRanks = std::move(ranks);
    m_state.highlightSeverity = severity;
    update();
}

void TimelineWidget::scrollToRank(int64_t rank) {
    int g = m_layout.groupOfRank(rank);
    if (g >= 0) m_scroll->setValue(m_layout.groups()[size_t(g)].y);
}

void TimelineWidget::orderRanks(std::vector<int64_t> ranks, bool filtered) {
    if (!m_data) return;
    m_layout.orderRanks(ranks, filtered);
    if (!m_userLayout) m_layout.fitTo(lanesRect().height());
    updateScrollRange();
    requestData();
    update();
}

void TimelineWidget::scrollToTrack(int64_t trackId) {
    const Lane* l = m_layout.laneOfTrack(trackId);
    if (!l) return;
    if (l->height == 0) { // its rank is folded: unfold it
        const auto* t = m_data ? m_data->track(trackId) : nullptr;
        const int g = t ? m_layout.groupOfProcess(t->processId) : -1;
        if (g < 0) return;
        m_layout.setCollapsed(size_t(g), false);
        m_userLayout = true;
        updateScrollRange();
        requestData();
        l = m_layout.laneOfTrack(trackId);
    }
    const int h = lanesRect().height();
    if (l->y < m_state.scrollY || l->y + l->height > m_state.scrollY + h)
        m_scroll->setValue(std::max(0, l->y - h / 3));
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().window());
    const QRect ruler(0, 0, width() - kScrollWidth, TimelinePainter::kRulerHeight);
    TimelinePainter::paintRuler(p, ruler, m_axis);
    if (!m_data) {
        p.drawText(lanesRect(), Qt::AlignCenter, tr("Open a trace (File > Open, or drop a .hpcprof file here)"));
        return;
    }
    TimelineDataPtr d = m_fetcher.data();
    TimelinePainter::paintLanes(p, lanesRect(), m_axis, m_layout, *m_data, d.get(), m_state);
    TimelinePainter::paintMinimap(p, minimapRect(), m_axis, m_analysis.get());
    if (m_drag == Drag::RubberBand || m_drag == Drag::Range) {
        const int a = std::min(m_pressPos.x(), m_lastPos.x()), b = std::max(m_pressPos.x(), m_lastPos.x());
        QColor c = m_drag == Drag::RubberBand ? QColor(0x20, 0x60, 0xff, 60) : QColor(0x20, 0xa0, 0x60, 60);
        p.fillRect(QRect(a, lanesRect().top(), b - a, lanesRect().height()), c);
    }
    if (m_fetcher.busy()) {
        p.setPen(QColor(0x80, 0x80, 0x80));
        p.drawText(ruler.adjusted(0, 0, -6, 0), Qt::AlignRight | Qt::AlignVCenter, tr("loading..."));
    }
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
    if (!m_data) return;
    const double steps = e->angleDelta().y() / 120.0;
    if (e->modifiers() & Qt::ShiftModifier) {
        m_scroll->setValue(m_scroll->value() - int(steps * LaneLayout::kRowHeight * 3));
        return;
    }
    const double anchor = e->position().x() - TimelinePainter::kGutter;
    zoomAt(std::pow(kKeyZoom, steps), std::clamp(anchor, 0.0, m_axis.width()));
    e->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
    if (!m_data) return QWidget::keyPressEvent(e);
    const QPoint mouse = mapFromGlobal(QCursor::pos());
    double anchor = mouse.x() - TimelinePainter::kGutter;
    if (!rect().contains(mouse) || anchor < 0) anchor = m_axis.width() / 2;
    switch (e->key()) {
    case Qt::Key_W: zoomAt(kKeyZoom, anchor); break;
    case Qt::Key_S: zoomAt(1.0 / kKeyZoom, anchor); break;
    case Qt::Key_A:
        m_axis.panPixels(-kKeyPan * m_axis.width());
        axisChanged(false);
        break;
    case Qt::Key_D:
        m_axis.panPixels(kKeyPan * m_axis.width());
        axisChanged(false);
        break;
    case Qt::Key_Home:
    case Qt::Key_0: zoomToFit(); break;
    case Qt::Key_Backspace: m_zoom->back(); break;
    case Qt::Key_Escape:
        m_state.selectedEvent = -1;
        m_state.rangeSelection.reset();
        update();
        break;
    default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
    setFocus();
    m_pressPos = m_lastPos = e->pos();
    m_moved = false;
    if (!m_data) return;
    if (minimapRect().contains(e->pos())) {
        m_drag = Drag::Minimap;
        mouseMoveEvent(e);
        return;
    }
    if (e->button() == Qt::RightButton || (e->modifiers() & Qt::ControlModifier))
        m_drag = Drag::RubberBand;
    else if (e->modifiers() & Qt::ShiftModifier)
        m_drag = Drag::Range;
    else
        m_drag = Drag::Pan;
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
    if (!m_data) return;
    const QPoint d = e->pos() - m_lastPos;
    if ((e->pos() - m_pressPos).manhattanLength() > kDragThreshold) m_moved = true;
    if (m_drag == Drag::Minimap) {
        const double w = minimapRect().width() - TimelinePainter::kGutter;
        const double frac = std::clamp((e->pos().x() - TimelinePainter::kGutter) / w, 0.0, 1.0);
        const int64_t c = m_axis.bounds().begin + int64_t(frac * double(m_axis.bounds().span()));
        const int64_t span = m_axis.window().span();
        m_axis.setWindow({c - span / 2, c - span / 2 + span});
        axisChanged(false);
    } else if (m_drag == Drag::Pan && m_moved) {
        m_axis.panPixels(-d.x());
        m_scroll->setValue(m_scroll->value() - d.y());
        axisChanged(false);
    } else if (m_drag == Drag::RubberBand || m_drag == Drag::Range) {
        update();
    }
    m_lastPos = e->pos();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
    const Drag drag = m_drag;
    m_drag = Drag::None;
    if (!m_data) return;
    const int a = std::min(m_pressPos.x(), e->pos().x()) - TimelinePainter::kGutter;
    const int b = std::max(m_pressPos.x(), e->pos().x()) - TimelinePainter::kGutter;
    if ((drag == Drag::RubberBand || drag == Drag::Range) && m_moved && b - a > 2) {
        TimeWindow w{m_axis.pixelToTime(std::max(0, a)), m_axis.pixelToTime(std::max(0, b))};
        if (drag == Drag::RubberBand) {
            showWindow(w, true);
        } else {
            m_state.rangeSelection = w;
            emit rangeSelected(w);
        }
        update();
        return;
    }
    if (m_moved || drag == Drag::Minimap) {
        update();
        return;
    }
    // A click: collapse/expand a group, or select the event under the pointer.
    const int y = e->pos().y() - lanesRect().top() + m_state.scrollY;
    LaneLayout::Hit h = m_layout.hitTest(y);
    if (h.group >= 0 && h.lane < 0) {
        m_layout.setCollapsed(size_t(h.group), !m_layout.groups()[size_t(h.group)].collapsed);
        m_userLayout = true;
        updateScrollRange();
        requestData();
        update();
        return;
    }
    const DrawItem* item = TimelinePainter::itemAt(m_fetcher.data().get(), m_layout, m_axis,
                                                   e->pos().x() - TimelinePainter::kGutter, y);
    m_state.selectedEvent = item ? item->eventId : -1;
    update();
    if (item) emit eventClicked(item->eventId);
}

QString TimelineWidget::summaryTip(double x, int y) const {
    const LaneLayout::Hit h = m_layout.hitTest(y);
    const TimelineDataPtr d = m_fetcher.data();
    if (x < 0 || h.group < 0 || h.lane >= 0 || !d) return {};
    // A few pixels around the pointer: what the eye takes in there.
    const int64_t t0 = m_axis.pixelToTime(x - 2), t1 = m_axis.pixelToTime(x + 3);
    const std::vector<int> members = m_layout.rowMembers(h.group);
    QStringList lines;
    if (members.size() > 1) lines << tr("%1 ranks in this row (their mean):").arg(members.size());
    for (int gi : members) { // a shared row (more ranks than pixel rows): each rank's mix
        const LaneGroup& g = m_layout.groups()[size_t(gi)];
        auto it = d->groups.find(g.processId);
        const QString mix = it == d->groups.end() ? QString() : sharesText(*it->second, t0, t1);
        if (members.size() > 1)
            lines << QStringLiteral("%1: %2").arg(g.rank ? tr("rank %1").arg(*g.rank) : g.title, mix);
        else if (!mix.isEmpty())
            lines << g.title << mix;
    }
    if (lines.isEmpty()) return {};
    return lines.join(QLatin1Char('\n')) + QStringLiteral(" at %1").arg(formatDuration(t0));
}

bool TimelineWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip && m_data) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int y = he->pos().y() - lanesRect().top() + m_state.scrollY;
        const DrawItem* item = he->pos().y() >= lanesRect().top() && he->pos().x() >= TimelinePainter::kGutter
                                   ? TimelinePainter::itemAt(m_fetcher.data().get(), m_layout, m_axis,
                                                             he->pos().x() - TimelinePainter::kGutter, y)
                                   : nullptr;
        if (!item) {
            const QString mix = summaryTip(he->pos().x() - TimelinePainter::kGutter, y);
            if (mix.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(he->globalPos(), mix, this);
            return true;
        }
        QString text;
        const QString cls = className(analyzer::EventClass(item->cls));
        if (item->folded)
            text = tr("%1 events folded (%2)\nlongest: %3\nzoom in to see them")
                       .arg(item->count)
                       .arg(cls, formatDuration(item->dur));
        else
            text = QStringLiteral("%1\n%2, %3\nstart %4")
                       .arg(QString::fromStdString(m_data->index.string(item->nameId)), cls,
                            formatDuration(item->dur), formatDuration(item->ts));
        QToolTip::showText(he->globalPos(), text, this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace hpcprof::gui
