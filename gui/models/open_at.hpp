// SPDX-License-Identifier: MIT
// Where hpcprof-gui opens a trace: `--window T0:T1`, `--event ID` or `--finding ID` (at most
// one), the commands the reports print next to their findings and example events.
#pragma once

#include <QString>
#include <cstdint>
#include <optional>

#include "hpcprof/status.hpp"
#include "models/time_axis.hpp"

namespace hpcprof::gui {

struct OpenAt {
    std::optional<TimeWindow> window; ///< relative to the trace origin, like every --window
    std::optional<int64_t> event;     ///< an event id: zoomed around and selected
    QString finding;                  ///< a finding id of the report: selected and activated
    QString option;                   ///< the option as given ("--event 42"), for messages
    bool empty() const { return !window && !event && finding.isEmpty(); }
};

/// The three options as given on the command line (an empty string: not given). An error
/// (one line, naming the option) for a bad value or more than one of them.
Result<OpenAt> parseOpenAt(const QString& window, const QString& event, const QString& finding);

/// The view of an event [ts, ts + dur): centred, three times its length and at least 10 us,
/// so the event fills about a third of the width and its neighbours show.
TimeWindow eventView(int64_t ts, int64_t dur);

} // namespace hpcprof::gui
