// SPDX-License-Identifier: MIT
#include "screenshot.hpp"

#include <QApplication>
#include <QPixmap>
#include <cstdio>

#include "hpcprof/report/printable.hpp"
#include "main_window.hpp"

namespace hpcprof::gui {

namespace {
int fail(const std::string& message, int code) {
    std::fprintf(stderr, "hpcprof-gui: %s\n", report::printable(message).c_str());
    return code;
}
int fail(const QString& message, int code) {
    return fail(message.simplified().toStdString(), code);
}
} // namespace

int runScreenshot(const ScreenshotOptions& o) {
    MainWindow win;
    win.resize(o.size);
    win.show();
    bool failed = false, opened = false;
    QObject::connect(&win.session(), &TraceSession::openFailed, [&] { failed = true; });
    QObject::connect(&win.session(), &TraceSession::opened, [&] { opened = true; });
    win.openTraceFile(o.trace);
    TraceSession::waitFor([&] { return failed || opened; }, o.timeoutMs);
    // A trace that cannot be read is a set-up error (2), like in every hpcprof command.
    if (failed)
        return fail("cannot open " + o.trace + ": " + win.lastError().simplified().toStdString(), 2);
    if (!opened) return fail("timed out opening " + o.trace, 1);
    TraceSession::waitFor([&] { return !win.session().analysisRunning(); }, o.timeoutMs);
    if (o.counters) {
        const QStringList unknown = win.showCounters(*o.counters);
        if (!unknown.isEmpty())
            return fail(QStringLiteral("no counter '%1' in this trace (see View > Counters)").arg(unknown.front()), 2);
    }
    // Window times are relative to the trace origin, like every --window in hpcprof.
    bool shown = false;
    QString error;
    QObject::connect(&win, &MainWindow::openAtDone, [&](const QString& e) {
        shown = true;
        error = e;
    });
    win.openAt(o.at);
    TraceSession::waitFor([&] { return shown; }, o.timeoutMs);
    if (!shown) return fail(QStringLiteral("timed out opening at %1").arg(o.at.option), 1);
    if (!error.isEmpty()) return fail(error, 2);
    if (!o.tab.isEmpty() && !win.showTab(o.tab)) return fail(QStringLiteral("no tab '%1'").arg(o.tab), 2);
    // Data may arrive in rounds (lanes grow when deeper events show up): wait until quiet.
    for (int i = 0; i < 5; ++i) {
        win.timeline()->fetcher().waitUntilIdle(o.timeoutMs);
        QApplication::processEvents();
    }
    QPixmap pm = win.grab();
    if (!pm.save(o.output, "PNG")) return fail(QStringLiteral("cannot write %1").arg(o.output), 1);
    return 0;
}

} // namespace hpcprof::gui
