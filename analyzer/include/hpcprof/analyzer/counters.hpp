// SPDX-License-Identifier: MIT
/// CPU-counter analysis and counter series for timelines: per rank and per compute phase
/// utilisation, run-queue wait, context-switch and migration rates, IPC and miss rates where
/// counted; per host the number of busy threads against the CPUs (oversubscription). The rules
/// that read them: oversubscription, low-ipc, shared-cores (docs/advice-rules.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/counter_types.hpp"
#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

/// Counter analysis of the ranks of `a` over its window (a.summary.windowBegin/End).
CounterAnalysis analyzeCounters(const Trace& trace, const Analysis& a);

/// One counter lane of the trace (a row of counter_track).
struct CounterTrackInfo {
    int64_t id = 0, processId = 0;
    std::optional<int64_t> rank, tid; ///< tid empty for process-wide counters
    std::string name, unit;
    int64_t samples = 0;
};

/// Every counter track, by rank, tid, name.
Result<std::vector<CounterTrackInfo>> counterTracks(const Trace& trace);

struct CounterPoint {
    int64_t ts = 0;
    double value = 0;
};

/// Samples of `trackId` in [t0, t1) plus the last one before t0 (so a chart starts at its
/// level), thinned to at most one per resolutionNs bucket (the bucket's last sample, which for a
/// running total keeps every delta exact at bucket edges). resolutionNs <= 0: every sample.
Result<std::vector<CounterPoint>> counterSeries(const Trace& trace, int64_t trackId, int64_t t0,
                                                int64_t t1, int64_t resolutionNs);

/// Rate of a running total per second (or the plain level for ratio tracks) between
/// consecutive points: what a chart of a cumulative counter draws.
std::vector<CounterPoint> ratePerSecond(const std::vector<CounterPoint>& points);

/// How chartFromSamples turns samples into what a chart draws.
struct ChartOptions {
    bool ratio = false;               ///< a level (unit 'ratio'), not a running total
    int64_t resolutionNs = 1;         ///< bucket width
    int64_t minIntervalNs = 1'000'000; ///< shorter sample intervals merge with the next ones
    double maxRate = 0;               ///< cap per second (1e9 for a thread's ns of CPU); 0: none
};

/// What a chart of a counter draws from its samples (sorted by ts): one point per bucket
/// (ts = the bucket's start). For a running total the largest rate per second over the sample
/// intervals (merged to at least minIntervalNs) that start in the bucket, so short bursts stay
/// visible when zoomed out; with maxRate, an interval's growth beyond it moves back into the
/// latest earlier intervals below it (counted late, not lost; dropped only when none has room).
/// For a ratio track the largest level.
std::vector<CounterPoint> chartFromSamples(const std::vector<CounterPoint>& samples, const ChartOptions& o);

/// chartFromSamples over the samples of `trackId` in [t0 - resolutionNs, t1 + resolutionNs].
/// The GUI's counter lanes draw this.
Result<std::vector<CounterPoint>> counterChart(const Trace& trace, int64_t trackId, bool ratio,
                                               int64_t t0, int64_t t1, int64_t resolutionNs,
                                               double maxRate = 0);

} // namespace hpcprof::analyzer
