// SPDX-License-Identifier: MIT
/// The whole analysis of a trace: attribution per rank (streamed rank by rank), wait states,
/// POP metrics, steps, top lists and advice findings, in one Analysis struct.
#pragma once

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

/// Analyses `trace`. Errors only for unreadable traces or a window that selects nothing; data
/// problems (negative durations, unsorted events, unmatched calls) become `warnings`.
Result<Analysis> analyzeTrace(const Trace& trace, const AnalysisOptions& options = {});

/// Parses a --window argument: "all" (the whole recorded span), "T0:T1" (ns, or with a unit suffix ns|us|ms|s, either side may be
/// empty) or "range:NAME" (NAME may end in '*').
Result<WindowSpec> parseWindow(const std::string& text);

} // namespace hpcprof::analyzer
