// SPDX-License-Identifier: MIT
// The timeline: time ruler, lanes of every rank, minimap. Input handling (wheel, W/S/A/D, drag,
// rubber band, range selection, click, hover) only changes the TimeAxis and asks the fetcher for
// data; painting only walks the fetched draw list (TimelinePainter). No SQL here.
#pragma once

#include <QScrollBar>
#include <QWidget>
#include <optional>
#include <unordered_set>

#include "models/analysis_models.hpp"
#include "models/lane_layout.hpp"
#include "models/timeline_fetcher.hpp"
#include "models/timeline_painter.hpp"
#include "models/zoom_stack.hpp"

namespace hpcprof::gui {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMinimapHeight = 44;

    TimelineWidget(ZoomStack* zoom, QWidget* parent = nullptr);

    void setTrace(TraceDataPtr data);
    void setAnalysis(AnalysisPtr analysis);
    /// Shows `w`; `record` adds a zoom-history entry.
    void showWindow(TimeWindow w, bool record);
    void zoomToFit();
    void selectEvent(int64_t eventId);
    /// Centres `[ts, ts+dur)` (zooming in when it is small) and scrolls its track into view.
    void revealEvent(int64_t ts, int64_t dur, int64_t trackId);
    void setMatches(std::unordered_set<int64_t> ids);
    /// Marks the ranks of the active finding in its severity's colour.
    void setHighlightedRanks(std::vector<int64_t> ranks, analyzer::Severity severity = analyzer::Severity::Warning);
    void scrollToRank(int64_t rank);
    /// Orders the ranks' groups (the Breakdown table's order); `filtered` hides the others.
    void orderRanks(std::vector<int64_t> ranks, bool filtered);
    void scrollToTrack(int64_t trackId);
    /// The counter lanes drawn: the counters called `names` (View > Counters); none given: the
    /// default CPU-use lanes (defaultCounterNames). A new trace starts with the default.
    void setShownCounters(std::optional<QSet<QString>> names);
    const std::optional<QSet<QString>>& shownCounters() const { return m_shownCounters; }

    const TimeAxis& axis() const { return m_axis; }
    const LaneLayout& layout() const { return m_layout; }
    TimelineFetcher& fetcher() { return m_fetcher; }
    /// Top of the lanes area in widget coordinates, and the time area's left edge.
    int lanesTop() const { return TimelinePainter::kRulerHeight; }
    int timeLeft() const { return TimelinePainter::kGutter; }
    int scrollY() const { return m_state.scrollY; }

signals:
    void eventClicked(int64_t eventId);
    void rangeSelected(hpcprof::gui::TimeWindow window);
    void windowChanged(hpcprof::gui::TimeWindow window);

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    bool event(QEvent*) override;

private:
    enum class Drag { None, Pan, RubberBand, Range, Minimap };
    QRect lanesRect() const;
    QRect minimapRect() const;
    void updateAxisWidth();
    void axisChanged(bool record);
    void requestData();
    void dataArrived();
    void updateScrollRange();
    void zoomAt(double factor, double anchorX);
    /// Tooltip of a summary row at time-area pixel x (lanes y): its class mix there.
    QString summaryTip(double x, int y) const;

    ZoomStack* m_zoom;
    TraceDataPtr m_data;
    AnalysisPtr m_analysis;
    TimeAxis m_axis;
    LaneLayout m_layout;
    TimelineFetcher m_fetcher;
    PaintState m_state;
    std::unordered_set<int64_t> m_matches;
    std::optional<QSet<QString>> m_shownCounters;
    QScrollBar* m_scroll;
    Drag m_drag = Drag::None;
    QPoint m_pressPos, m_lastPos;
    bool m_moved = false;
    bool m_userLayout = false; ///< the user folded or unfolded a rank: resizing keeps the layout
};

} // namespace hpcprof::gui
