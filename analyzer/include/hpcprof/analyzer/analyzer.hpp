// SPDX-License-Identifier: MIT
/// The analyzer façade: every analysis hpcprof offers, each a free function or small class that
/// takes a read-only Trace (or the results of another analysis) and returns plain structs.
///
///  - Trace::open                 trace.hpp          open a trace read-only, validated
///  - TraceIndex                  trace_index.hpp    small tables in memory, per-track event scans
///  - summarizeIo                 io_summary.hpp     the summary `hpcprof run` prints
///  - IntervalSet                 intervals.hpp      union / intersection / difference, O(n log n)
///  - attribute                   attribution.hpp    one rank's time split into exclusive classes
///  - computeWaitStates           wait_states.hpp    wait at N x N, late sender/receiver, stragglers
///  - computePop                  pop_metrics.hpp    POP efficiency metrics
///  - stepsFromRanges/Collectives steps.hpp          step detection and per-step times
///  - runRules, ruleCatalog       advice.hpp         advice rules -> findings
///  - analyzeTrace                analyze.hpp        all of the above for one trace, in one struct
///  - diffAnalyses                diff.hpp           compare two analyses, flag regressions
///  - TimelineQuery               timeline_query.hpp level-of-detail slices for the timeline
///  - analyzeCounters, counterSeries counters.hpp     CPU counters per rank/host, counter lanes
///  - analyzeRdma, rdmaRules      rdma_analysis.hpp  RDMA traffic per queue pair, rank and posting call
#pragma once

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/attribution.hpp"
#include "hpcprof/analyzer/counters.hpp"
#include "hpcprof/analyzer/diff.hpp"
#include "hpcprof/analyzer/intervals.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "hpcprof/analyzer/pop_metrics.hpp"
#include "hpcprof/analyzer/rdma_analysis.hpp"
#include "hpcprof/analyzer/steps.hpp"
#include "hpcprof/analyzer/timeline_query.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
#include "hpcprof/analyzer/wait_states.hpp"
