// SPDX-License-Identifier: MIT
// Colours of the event classes (timeline, legend, breakdown chart) and of the attribution's
// time classes. One table so the legend and the drawing can never disagree.
#pragma once

#include <QColor>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::gui {

inline constexpr int kEventClassCount = 7;

/// Fill colour of events of class `c`.
QColor classColor(analyzer::EventClass c);
/// Colour of a time class of the breakdown (idle is light grey).
QColor timeClassColor(analyzer::TimeClass c);
/// A CPU-use lane's colours: the thread's utilisation (teal) and its time waiting for a CPU
/// stacked above it (orange), in the lane and in the legend.
QColor cpuUseColor();
QColor cpuWaitColor();
/// Human name of an event class ("communication").
QString className(analyzer::EventClass c);

} // namespace hpcprof::gui
