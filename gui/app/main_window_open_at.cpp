// SPDX-License-Identifier: MIT
// Opening the main window at evidence from a report: `--window T0:T1`, `--event ID` (zoomed
// around the event and selected, its details shown) and `--finding ID` (selected in the findings
// list and activated: its example events' window, its ranks highlighted).
#include <QSortFilterProxyModel>
#include <QStringList>
#include <QTableView>

#include "main_window.hpp"
#include "models/findings_model.hpp"

namespace hpcprof::gui {

void MainWindow::openAt(const OpenAt& at) {
    if (at.window) return openAtWindow(*at.window, at.option);
    if (at.event) return openAtEvent(*at.event);
    if (!at.finding.isEmpty()) return openAtFinding(at.finding);
    emit openAtDone({});
}

/// A window that misses the trace is an error, as in every hpcprof command: the axis would
/// slide it onto the whole run.
void MainWindow::openAtWindow(TimeWindow w, const QString& option) {
    const TimeWindow bounds = m_session.data()->bounds;
    if (w.end <= bounds.begin || w.begin >= bounds.end) {
        emit openAtDone(tr("%1 does not overlap the trace (%2..%3 ns)").arg(option).arg(bounds.begin).arg(bounds.end));
        return;
    }
    m_timeline->showWindow(w, true);
    emit openAtDone({});
}

void MainWindow::openAtEvent(int64_t eventId) {
    // One answer: the connections live as long as `once`.
    auto* once = new QObject(this);
    connect(&m_session, &TraceSession::eventDetailsReady, once, [this, once, eventId](const EventDetails& d) {
        if (d.eventId != eventId) return;
        once->deleteLater();
        m_timeline->showWindow(eventView(d.ts, d.dur), true);
        m_timeline->scrollToTrack(d.trackId);
        m_timeline->selectEvent(d.eventId);
        emit openAtDone({});
    });
    connect(&m_session, &TraceSession::lookupFailed, once, [this, once, eventId](qint64 id, const QString& why) {
        if (id != eventId) return;
        once->deleteLater();
        emit openAtDone(tr("no event %1 in this trace (%2)").arg(eventId).arg(why));
    });
    m_session.lookup(eventId);
}

void MainWindow::openAtFinding(const QString& id) {
    auto* once = new QObject(this);
    auto show = [this, once, id] {
        once->deleteLater();
        const int row = selectFinding(id);
        if (row < 0) {
            QStringList ids;
            for (int r = 0; r < m_findings->rowCount(); ++r) ids << QString::fromStdString(m_findings->finding(r)->id);
            emit openAtDone(tr("no finding '%1' in this trace (its findings: %2)")
                                .arg(id, ids.isEmpty() ? tr("none") : ids.join(QStringLiteral(", "))));
            return;
        }
        const analyzer::Finding* f = m_findings->finding(row);
        if (!f || f->eventIds.empty()) {
            emit openAtDone({});
            return;
        }
        // Done once the timeline shows the events' window (activateFinding asked for it).
        connect(&m_session, &TraceSession::located, this, [this] { emit openAtDone({}); }, Qt::SingleShotConnection);
    };
    if (m_session.analysis()) return show();
    connect(&m_session, &TraceSession::analysisReady, once, show);
    connect(&m_session, &TraceSession::analysisFailed, once, [this, once](const QString& why) {
        once->deleteLater();
        emit openAtDone(tr("no findings: the analysis failed (%1)").arg(why));
    });
}

int MainWindow::selectFinding(const QString& id) {
    for (int row = 0; row < m_findings->rowCount(); ++row) {
        if (QString::fromStdString(m_findings->finding(row)->id) != id) continue;
        auto* proxy = static_cast<QSortFilterProxyModel*>(m_findingsView->model());
        const QModelIndex at = proxy->mapFromSource(m_findings->index(row, 0));
        m_findingsView->setCurrentIndex(at);
        m_findingsView->selectRow(at.row());
        m_findingsView->scrollTo(at);
        m_tabs->setCurrentWidget(m_findingsView->parentWidget());
        activateFinding(row);
        return row;
    }
    return -1;
}

} // namespace hpcprof::gui
