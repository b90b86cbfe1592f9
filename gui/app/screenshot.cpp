// SPDX-License-Identifier: MIT
#include "screenshot.hpp"

#include <QApplication>
#include <QPixmap>
#include <cstdio>

#include "hpcprof/analyzer/analyze.hpp"
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
    win.openTraceFile(o.trace);
    TraceSession::waitFor([&] { return failed || opened; }, o.timeoutMs);
    // A trace that cannot be read is a set-up error (2), like in every hpcprof command.
    if (failed)
        return fail("cannot open " + o.trace + ": " + win.lastError().simplified().toStdString(), 2);
    if (!opened) return fail("timed out opening " + o.trace, 1);
    TraceSession::waitFor([&] { return !win.session().analysisRunning(); }, o.timeoutMs);
    if (window) {
        // Window times are relative to the trace origin, like every --window in hpcprof. One
        // that misses the trace is an error: the axis would slide it onto the whole run.
        const TimeWindow bounds = win.session().data()->bounds;
        if (window->end <= bounds.begin || window->begin >= bounds.end)
            return fail(QStringLiteral("--window %1 does not overlap the trace (%2..%3 ns)")
                            .arg(o.window)
                            .arg(bounds.begin)
                            .arg(bounds.end),
                        2);
        win.timeline()->showWindow(*window, true);
    }
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
