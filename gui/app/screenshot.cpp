// SPDX-License-Identifier: MIT
#include "screenshot.hpp"

#include <QApplication>
#include <QPixmap>
#include <cstdio>

#include "hpcprof/analyzer/analyze.hpp"
#include "main_window.hpp"

namespace hpcprof::gui {

namespace {
int fail(const QString& message, int code) {
    std::fprintf(stderr, "hpcprof-gui: %s\n", message.simplified().toLocal8Bit().constData());
    return code;
}
} // namespace

int runScreenshot(const ScreenshotOptions& o) {
    std::optional<TimeWindow> window;
    if (!o.window.isEmpty()) {
        auto w = analyzer::parseWindow(o.window.toStdString());
        if (!w || w->kind != analyzer::WindowSpec::Kind::TimeRange)
            return fail(QStringLiteral("bad --window '%1' (want T0:T1, e.g. 1.5s:2s)").arg(o.window), 2);
        window = TimeWindow{w->begin, w->end};
    }
    MainWindow win;
    win.resize(o.size);
    win.show();
    bool failed = false, opened = false;
    QObject::connect(&win.session(), &TraceSession::openFailed, [&] { failed = true; });
    QObject::connect(&win.session(), &TraceSession::opened, [&] { opened = true; });
    win.openTrace(o.trace);
    TraceSession::waitFor([&] { return failed || opened; }, o.timeoutMs);
    if (failed) return fail(QStringLiteral("cannot open %1: %2").arg(o.trace, win.lastError()), 1);
    if (!opened) return fail(QStringLiteral("timed out opening %1").arg(o.trace), 1);
    TraceSession::waitFor([&] { return !win.session().analysisRunning(); }, o.timeoutMs);
    if (window) {
        // Window times are relative to the trace origin, like every --window in hpcprof.
        win.timeline()->showWindow(*window, true);
    }
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
