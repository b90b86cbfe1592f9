// SPDX-License-Identifier: MIT
// View > Counters: which counter lanes the timeline draws. By default one CPU-use pair per rank
// (utilisation and time waiting for a CPU, defaultCounterNames); every other counter of the
// trace on demand, one entry per counter name.
#include <QAction>
#include <QMenu>
#include <QSignalBlocker>
#include <set>

#include "main_window.hpp"
#include "models/counter_lanes.hpp"

namespace hpcprof::gui {

void MainWindow::fillCountersMenu(const TraceData& data) {
    m_countersMenu->clear();
    std::set<QString> names;
    for (const auto& c : data.counters) names.insert(c.name);
    const QSet<QString> shown = defaultCounterNames(data.counters);
    for (const QString& name : names) {
        QAction* a = m_countersMenu->addAction(name);
        a->setCheckable(true);
        a->setChecked(shown.contains(name));
        connect(a, &QAction::toggled, this, [this] {
            QSet<QString> on;
            for (const QAction* e : m_countersMenu->actions())
                if (e->isChecked()) on.insert(e->text());
            m_timeline->setShownCounters(on);
        });
    }
    m_countersMenu->setEnabled(!names.empty());
}

QStringList MainWindow::showCounters(const QStringList& names) {
    QSet<QString> on, known;
    for (QAction* a : m_countersMenu->actions()) {
        known.insert(a->text());
        const QSignalBlocker quiet(a); // one relayout below, not one per entry
        a->setChecked(names.contains(a->text()));
        if (a->isChecked()) on.insert(a->text());
    }
    QStringList unknown;
    for (const QString& n : names)
        if (!known.contains(n)) unknown << n;
    m_timeline->setShownCounters(on);
    return unknown;
}

} // namespace hpcprof::gui
