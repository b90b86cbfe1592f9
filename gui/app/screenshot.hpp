// SPDX-License-Identifier: MIT
// `hpcprof-gui --screenshot out.png [--window T0:T1] TRACE`: opens the trace in a main window on
// the current (normally offscreen) platform, waits for the analysis and the timeline data, and
// saves the window as a PNG. Errors are one line on stderr and a non-zero exit code.
#pragma once

#include <QSize>
#include <QString>

namespace hpcprof::gui {

struct ScreenshotOptions {
    QString trace, output, window;
    QSize size{1600, 1000};
    int timeoutMs = 300000;
};

/// Returns the process exit code: 0, 1 (trace cannot be opened or saved), 2 (bad --window).
int runScreenshot(const ScreenshotOptions& options);

} // namespace hpcprof::gui
