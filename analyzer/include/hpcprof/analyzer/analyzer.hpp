// SPDX-License-Identifier: MIT
/// The analyzer façade: what the library offers to the CLI, the GUI and other callers. Every
/// analysis takes a read-only Trace and returns plain structs; nothing here formats or draws
/// (report writers are in hpcprof/report/).
///
///  - Trace::open                 trace.hpp          open a trace read-only, validated
///  - TraceIndex                  trace_index.hpp    processes, tracks, strings, categories
///  - analyzeTrace                analyze.hpp        breakdown, wait states, POP, steps, findings
///  - diffAnalyses                diff.hpp           compare two analyses, flag regressions
///  - ruleCatalog                 advice.hpp         the advice rules and their thresholds
///  - summarizeIo                 io_summary.hpp     the summary `hpcprof run` prints
///  - exportChromeTrace           chrome_export.hpp  Chrome/Perfetto JSON
///  - TimelineQuery               timeline_query.hpp level-of-detail slices for timelines
///  - counterTracks, counterChart counters.hpp       counter lanes and their series
///  - eventDetails, findEvents,   event_query.hpp    one event, search, locate, time bounds,
///    locateEvents, traceStats                       data-quality rows
///
/// The building blocks behind analyzeTrace (interval algebra, attribution, wait states, POP,
/// steps, RDMA) are internal (analyzer/src); their unit tests include them from there.
#pragma once

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/chrome_export.hpp"
#include "hpcprof/analyzer/counters.hpp"
#include "hpcprof/analyzer/diff.hpp"
#include "hpcprof/analyzer/event_query.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "hpcprof/analyzer/timeline_query.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
