// SPDX-License-Identifier: MIT
/// Counter lanes: which are shown by default (one CPU-use pair per rank), the cap on a thread's
/// CPU-time rate, and readable units (% of one CPU, GB/s, /s).
#pragma once

#include <QSet>
#include <QString>
#include <utility>
#include <vector>

#include "models/trace_data.hpp"

namespace hpcprof::gui {

/// Largest rate per second a counter can have: 1e9 for a thread's ns counters (task_clock,
/// cpu_wait: one CPU-second per second), 0 (none) otherwise.
double counterRateCap(const CounterTrackInfo& c);

/// A chart value (rate per second, or a level for ratio tracks) in readable units:
/// "85 % CPU", "1.2 GB/s", "3.4 k/s", "0.85".
QString formatCounterValue(const CounterTrackInfo& c, double value);

/// The lane label's unit: "% CPU", "GB/s", "/s" or "ratio".
QString counterUnitLabel(const CounterTrackInfo& c);

/// Counter names shown by default (on main threads, see counterLaneShown): task_clock and
/// cpu_wait, or, in a trace without a thread's task_clock (an import), the ratio tracks
/// cpu_utilization and cpu_wait_fraction.
QSet<QString> defaultCounterNames(const std::vector<CounterTrackInfo>& counters);

/// Whether lane `c` is drawn when the counters named `shown` are on: only main-thread lanes
/// for the CPU-use counters of the default set, and those only on ranks when the trace has
/// ranks (`rankless`: c's process has none while others do: mpirun, a launcher); every lane
/// of any other chosen name.
bool counterLaneShown(const CounterTrackInfo& c, const QSet<QString>& shown, bool rankless = false);

/// The counter drawn stacked above a CPU-use counter in one lane (task_clock -> cpu_wait,
/// cpu_utilization -> cpu_wait_fraction), empty for any other name.
QString stackedCounterName(const QString& name);

/// Heights in pixels of a CPU-use column of `h` pixels: utilisation from the bottom, the wait
/// for a CPU above it; values in units of `full` (one CPU), their sum clipped to h.
std::pair<int, int> cpuUseHeights(double use, double wait, double full, int h);

} // namespace hpcprof::gui
