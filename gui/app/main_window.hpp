// SPDX-License-Identifier: MIT
// The main window: timeline on top, analysis views (details, breakdown, POP, kernels, GPU idle,
// steps, top tables, findings, data quality) below, search bar and navigation in the toolbar, trace facts and
// data-loss warnings in the status bar and a banner. Opens traces from the command line, a file
// dialog, the recent-files menu or drag and drop.
#pragma once

#include <QLabel>
#include <QMainWindow>
#include <QTabWidget>

#include "models/open_at.hpp"
#include "models/trace_session.hpp"
#include "timeline_widget.hpp"

class QLineEdit;
class QCheckBox;
class QComboBox;
class QTextBrowser;
class QTableView;
class QMenu;
class QAction;

namespace hpcprof::gui {

class BreakdownChart;
class FindingsModel;
class KernelStatsModel;
class GpuIdleModel;
class GpuGapsModel;
class StepsModel;

/// A table over `model` through a numeric-sorting proxy (SortRole), sorted by `sortColumn`
/// descending, one row selected at a time.
QTableView* sortedTable(QAbstractItemModel* model, QWidget* parent, int sortColumn);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    void openTrace(const QString& path);
    /// Opens a trace named by bytes (a command-line argument, which need not be UTF-8).
    void openTraceFile(const std::string& path);
    TraceSession& session() { return m_session; }
    TimelineWidget* timeline() { return m_timeline; }
    /// Shows the analysis tab titled `title` (case-insensitive); false when there is none.
    bool showTab(const QString& title);
    ZoomStack& zoomStack() { return m_zoom; }
    /// The last error shown (empty when none): tests and --screenshot read it.
    const QString& lastError() const { return m_lastError; }
    /// Selects finding `row` (as if activated in the list).
    void activateFinding(int row);
    /// Moves to the next (+1) or previous (-1) search match.
    void stepMatch(int direction);
    /// Shows `at` (--window, --event, --finding) in the open trace; a finding waits for the
    /// analysis. openAtDone() follows, with an error message when there is no such evidence.
    void openAt(const OpenAt& at);
    /// Shows the counter lanes called `names` (as if checked in View > Counters, the others
    /// unchecked); the names the open trace has no counter of (empty when all are known).
    QStringList showCounters(const QStringList& names);

signals:
    void openAtDone(const QString& error);

protected:
    void dragEnterEvent(QDragEnterEvent*) override;
    void dropEvent(QDropEvent*) override;

private:
    void buildCentral();
    void buildStatusBar();
    void buildMenus();
    void buildToolbar();
    void buildViews();
    void buildGpuViews();
    QWidget* buildKernelsView();
    QWidget* buildGpuIdleView();
    QWidget* buildStepsView();
    /// Zooms the timeline to [begin, end) of `rank`, a little wider so the edges show.
    void zoomToInterval(int64_t begin, int64_t end, int64_t rank);
    void connectSession();
    void connectNavigation();
    void traceOpened(TraceDataPtr data);
    void analysisReady(AnalysisPtr a);
    void showError(const QString& message);
    void addRecent(const QString& path);
    void refreshRecentMenu();
    void runSearch();
    void showRangeTotals(TimeWindow w, AnalysisPtr a);
    void updateNavActions();
    /// View > Counters: one checkable entry per counter name of the trace, the default CPU-use
    /// lanes checked; toggling one shows or hides its lanes.
    void fillCountersMenu(const TraceData& data);
    void openAtWindow(TimeWindow w, const QString& option);
    void openAtEvent(int64_t eventId);
    void openAtFinding(const QString& id);
    /// Selects and activates the first finding called `id`: its row, -1 when there is none.
    int selectFinding(const QString& id);

    ZoomStack m_zoom;
    TraceSession m_session;
    TimelineWidget* m_timeline;
    QLabel* m_banner;
    QLabel* m_facts;
    QLabel* m_warnings;
    QLabel* m_legend;
    QTabWidget* m_tabs;
    QTextBrowser* m_details;
    BreakdownChart* m_chart;
    FindingsModel* m_findings;
    KernelStatsModel* m_kernelStats = nullptr;
    GpuIdleModel* m_gpuIdle = nullptr;
    GpuGapsModel* m_gpuGaps = nullptr;
    StepsModel* m_steps = nullptr;
    QTableView* m_findingsView;
    QLabel* m_findingText;
    QList<std::pair<QAbstractItemModel*, void (*)(QAbstractItemModel*, AnalysisPtr)>> m_analysisModels;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_countersMenu = nullptr;
    QAction* m_back = nullptr;
    QAction* m_forward = nullptr;
    QLineEdit* m_search = nullptr;
    QCheckBox* m_regex = nullptr;
    QComboBox* m_class = nullptr;
    QLineEdit* m_ranks = nullptr;
    QLabel* m_matchLabel = nullptr;
    SearchResult m_searchResult;
    int m_matchIndex = -1;
    int64_t m_pendingJump = -1;
    QString m_lastError;
    QString m_path;
};

} // namespace hpcprof::gui
