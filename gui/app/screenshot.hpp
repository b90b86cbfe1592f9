// SPDX-License-Identifier: MIT
// `hpcprof-gui --screenshot out.png [--window T0:T1 | --event ID | --finding ID] [--tab TITLE] TRACE`: opens the trace in a main window on
// the current (normally offscreen) platform, waits for the analysis and the timeline data, and
// saves the window as a PNG. Errors are one line on stderr and a non-zero exit code.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

#include <string>

#include "models/open_at.hpp"

namespace hpcprof::gui {

struct ScreenshotOptions {
    std::string trace; ///< as given on the command line (bytes: file names need not be UTF-8)
    QString output;
    OpenAt at; ///< where it opens (--window, --event, --finding)
    std::optional<QStringList> counters; ///< --counters: the counter lanes shown (none: the default)
    QString tab; ///< the analysis tab to show (its title, e.g. "Kernels"); empty: the first
    QSize size{1600, 1000};
    int timeoutMs = 300000;
};

/// Returns the process exit code: 0; 2 (the trace cannot be opened, a --window outside the
/// trace, no such event or finding, no tab of that title); 1 (timed out, the PNG cannot be written).
int runScreenshot(const ScreenshotOptions& options);

} // namespace hpcprof::gui
