// SPDX-License-Identifier: MIT
/// The one mapping from a severity (the report's info / warning / critical) to its colour, used
/// by the findings list, the data-quality list and the status-bar marker, so an info note is
/// never painted as a warning.
#pragma once

#include <QColor>
#include <QString>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::gui {

/// Text colour of a severity: grey-blue for info, amber for warning, red for critical.
QColor severityColor(analyzer::Severity s);

/// Background of what a finding of this severity marks (its ranks' rows on the timeline): its
/// colour mixed 35 % into white, light enough for black text.
QColor severityTint(analyzer::Severity s);

/// Severity of a trace stat's severity text: info -> Info, data_loss -> Warning, error ->
/// Critical (anything else: Warning).
analyzer::Severity statSeverity(const QString& text);

/// Severity of a data-quality warning of the analysis: its message starts with the stat's
/// severity ("info: ...", "data_loss: ..."); rows the analysis could not use are warnings.
analyzer::Severity warningSeverity(const analyzer::DataWarning& w);

} // namespace hpcprof::gui
