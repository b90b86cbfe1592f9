// SPDX-License-Identifier: MIT
// The analysis views of the main window (tabs under the timeline) and the jumps from them into
// the timeline: a finding zooms to its evidence and highlights its ranks, a bar shows its rank.
#include <QHeaderView>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>

#include "breakdown_chart.hpp"
#include "main_window.hpp"
#include "rank_table.hpp"
#include "models/class_colors.hpp"
#include "models/findings_model.hpp"
#include "models/format.hpp"
#include "models/gpu_models.hpp"

namespace hpcprof::gui {

namespace {
template <typename M> void setAnalysisOf(QAbstractItemModel* m, AnalysisPtr a) { static_cast<M*>(m)->setAnalysis(a); }
} // namespace

QTableView* sortedTable(QAbstractItemModel* model, QWidget* parent, int sortColumn) {
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(SortRole);
    auto* view = new QTableView(parent);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(sortColumn, Qt::DescendingOrder);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    view->setAlternatingRowColors(true);
    return view;
}

void MainWindow::buildViews() {
    m_details = new QTextBrowser(m_tabs);
    m_details->setOpenLinks(false);
    m_details->setHtml(tr("<p>Click an event for its details; Shift+drag over the timeline for the "
                          "per-class totals of a range.</p>"));
    m_tabs->addTab(m_details, tr("Details"));

    auto* breakdown = new QSplitter(Qt::Horizontal, m_tabs);
    auto* scroll = new QScrollArea(breakdown);
    m_chart = new BreakdownChart(scroll);
    scroll->setWidget(m_chart);
    scroll->setWidgetResizable(true);
    auto* breakdownModel = new BreakdownModel(this);
    breakdown->addWidget(scroll);
    auto* rankTable = new RankTable(breakdownModel, breakdown);
    breakdown->addWidget(rankTable);
    connect(rankTable, &RankTable::ranksOrdered, m_timeline, &TimelineWidget::orderRanks);
    m_tabs->addTab(breakdown, tr("Breakdown"));
    connect(m_chart, &BreakdownChart::rankActivated, m_timeline, &TimelineWidget::scrollToRank);

    auto* pop = new PopModel(this);
    auto* popView = new QTableView(m_tabs);
    popView->setModel(pop);
    popView->verticalHeader()->hide();
    popView->horizontalHeader()->setStretchLastSection(true);
    m_tabs->addTab(popView, tr("POP metrics"));

    buildGpuViews();
    auto* colls = new TopItemsModel(TopItemsModel::Kind::Collectives, this);
    auto* files = new TopItemsModel(TopItemsModel::Kind::Files, this);
    m_tabs->addTab(sortedTable(colls, m_tabs, TopItemsModel::TotalColumn), tr("Collectives"));
    m_tabs->addTab(sortedTable(files, m_tabs, TopItemsModel::TotalColumn), tr("Files"));

    m_findings = new FindingsModel(this);
    auto* findingsSplit = new QSplitter(Qt::Horizontal, m_tabs);
    m_findingsView = sortedTable(m_findings, findingsSplit, FindingsModel::GainColumn);
    m_findingText = new QLabel(findingsSplit);
    m_findingText->setWordWrap(true);
    m_findingText->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_findingText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_findingText->setText(tr("Activate a finding (double-click or Enter) to zoom to its evidence."));
    findingsSplit->addWidget(m_findingsView);
    findingsSplit->addWidget(m_findingText);
    findingsSplit->setStretchFactor(0, 2);
    findingsSplit->setStretchFactor(1, 1);
    m_tabs->addTab(findingsSplit, tr("Findings"));
    connect(m_findingsView, &QTableView::activated, this, [this](const QModelIndex& proxyIndex) {
        auto* proxy = static_cast<QSortFilterProxyModel*>(m_findingsView->model());
        activateFinding(proxy->mapToSource(proxyIndex).row());
    });
    connect(&m_session, &TraceSession::located, this, [this](TimeWindow hull, const std::vector<int64_t>& tracks) {
        const int64_t pad = std::max<int64_t>(hull.span() / 4, 1000);
        m_timeline->showWindow({hull.begin - pad, hull.end + pad}, true);
        if (!tracks.empty()) m_timeline->scrollToTrack(tracks.front());
    });

    auto* warnings = new WarningsModel(this);
    m_tabs->addTab(sortedTable(warnings, m_tabs, 1), tr("Data quality"));

    m_analysisModels = {{breakdownModel, &setAnalysisOf<BreakdownModel>},
                        {pop, &setAnalysisOf<PopModel>},
                        {m_kernelStats, &setAnalysisOf<KernelStatsModel>},
                        {m_gpuIdle, &setAnalysisOf<GpuIdleModel>},
                        {m_gpuGaps, &setAnalysisOf<GpuGapsModel>},
                        {m_steps, &setAnalysisOf<StepsModel>},
                        {colls, &setAnalysisOf<TopItemsModel>},
                        {files, &setAnalysisOf<TopItemsModel>},
                        {m_findings, &setAnalysisOf<FindingsModel>},
                        {warnings, &setAnalysisOf<WarningsModel>}};
    connect(&m_session, &TraceSession::analysisReady, m_chart, &BreakdownChart::setAnalysis);
    connect(&m_session, &TraceSession::opened, m_chart, [this] { m_chart->setAnalysis(nullptr); });
}

void MainWindow::activateFinding(int row) {
    const analyzer::Finding* f = m_findings->finding(row);
    if (!f) return;
    m_findingText->setText(QStringLiteral("<b>%1</b> (%2)<pre>%3</pre><p>%4</p>")
                               .arg(QString::fromStdString(f->title).toHtmlEscaped(),
                                    QString::fromLatin1(analyzer::severityName(f->severity)),
                                    FindingsModel::evidenceText(*f).toHtmlEscaped(),
                                    QString::fromStdString(f->suggestion).toHtmlEscaped()));
    m_timeline->setHighlightedRanks(f->ranks, f->severity);
    if (!f->ranks.empty()) m_timeline->scrollToRank(f->ranks.front());
    if (!f->eventIds.empty()) m_session.locate(f->eventIds);
}

void MainWindow::showRangeTotals(TimeWindow w, AnalysisPtr a) {
    QString h = tr("<p><b>Range %1 - %2</b> (%3), all ranks</p><table cellspacing=4>")
                    .arg(formatDuration(w.begin), formatDuration(w.end), formatDuration(w.span()));
    for (int c = 0; c < analyzer::kTimeClassCount; ++c) {
        const auto tc = analyzer::TimeClass(c);
        h += QStringLiteral("<tr><td><span style='background:%1'>&nbsp;&nbsp;&nbsp;</span> %2</td>"
                            "<td align=right>%3</td><td align=right>%4 %</td></tr>")
                 .arg(timeClassColor(tc).name(), QString::fromLatin1(analyzer::timeClassName(tc)),
                      formatDuration(a->summary.exclusive[c]), QString::number(a->summary.pct(tc), 'f', 1));
    }
    h += tr("</table><p>communication overlapped with compute: %1 of %2</p>")
             .arg(formatDuration(a->summary.commOverlappedNs), formatDuration(a->summary.commTotalNs));
    m_details->setHtml(h);
    m_tabs->setCurrentWidget(m_details);
}

} // namespace hpcprof::gui
