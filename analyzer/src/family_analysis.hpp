// SPDX-License-Identifier: MIT
// The analysis side of the data-family seam (internal to the analyzer; the families' analysis
// facets are compiled into it, families/<name>/<name>_analysis.cpp). The driver (analyze.cpp)
// iterates over the registered families and never names one:
//
//   per rank, on the rank pass's worker  rankScan()  ->  beginTrack(track)   per track
//                                                        onEvent(e, ctx)     each event of its
//                                                                            categories in the
//                                                                            rank's window
//                                                        finish(rank)        into the rank's facts
//   after every rank, in rank order      combine(ctx, scans, an)   its cross-rank results (wait
//                                                                  states, top lists, facts)
//   core: POP, steps, job summary, data quality
//   then                                 conclude(ctx, an)         what needs the finished
//                                                                  breakdown (its own section,
//                                                                  its data-quality entries)
//   rules                                rules()                   its advice (advice/rule_spec.hpp)
//
// A family's own result that has no place among the core results lives in Analysis::sections
// under its name, and its report facet (hpcprof/report/section.hpp) writes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "advice/rule_spec.hpp"
#include "attribution.hpp"
#include "collective_runs.hpp"
#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "intervals.hpp"
#include "track_scan.hpp"

namespace hpcprof::analyzer {

/// Frees a container's storage now. `c = {}` does not: for a vector or an unordered_map it
/// assigns an empty initializer list, which keeps the capacity (the bucket array), so a rank
/// scan's working storage would stay allocated, once per rank, until combine().
template <class Container>
void release(Container& c) {
    Container().swap(c);
}

/// What an event is next to, for a family's scan.
struct EventContext {
    const TrackInfo& track;
    bool gpuTrack;      ///< a GPU stream
    bool reference;     ///< on the rank's reference timeline (main thread, or GPU streams)
    uint8_t nameFlags;  ///< NameFlag bits of the event's name (name_flags.hpp)
};

/// What a family's scan is given at the end of its rank.
struct RankEnd {
    RankBreakdown& breakdown; ///< the core has filled the breakdown; the family adds its facts
    const TimelineSets& sets; ///< the rank's interval sets by class
    const IntervalSet& window;
    /// The instants of the window attributed to I/O (exposed I/O, exclusive of the other classes).
    const IntervalSet& exposedIo;
    /// GPU ranks: the instants of the window the rank is active and its GPU does nothing
    /// (breakdown.gpuIdleNs long); empty for other ranks.
    const IntervalSet& gpuIdle;
};

/// One family's view of one rank during the rank pass (on a worker thread, with that worker's
/// connection to the trace). It lives until combine(), after the pass's connections closed:
/// finish() must release every statement it prepared.
class RankScan {
public:
    virtual ~RankScan() = default;
    virtual void beginTrack(const TrackInfo& track, bool gpuTrack) {
        (void)track;
        (void)gpuTrack;
    }
    virtual void onEvent(const EventRecord& e, const EventContext& ctx) = 0;
    virtual void finish(const RankEnd& end) { (void)end; }
};

/// A family's cross-rank state that grows while the rank passes run: each rank's scan is handed
/// to add() as soon as its pass ends (one call at a time, ranks in any order), so that what it
/// keeps for the cross-rank results need not be held for every rank until combine() (the
/// communication family matches point-to-point messages there).
class RankFold {
public:
    virtual ~RankFold() = default;
    virtual void add(RankScan& scan) = 0;
};

/// What combine() and conclude() are given: the trace, its index, the options, each rank's
/// window, and what one family hands to the core (the collective calls the steps fall back on).
struct AnalysisContext {
    const Trace& trace;
    const TraceIndex& index;
    const AnalysisOptions& options;
    std::vector<std::pair<int64_t, IntervalSet>> windows; ///< (rank, window), in rank order
    /// What one family hands to the core for the steps of the collective pattern: the job's
    /// collective calls as runs (collective_runs.hpp; null: none), and the calls matched across
    /// ranks outside them (communication kernels without an instance).
    std::shared_ptr<const detail::CollectiveRuns> collectiveRuns;
    std::vector<CollectiveCall> extraCollectives;
    /// The steps from ranges (known before the pass; empty otherwise): combine() may annotate
    /// them (the communication family's per-step stragglers).
    StepStats* rangeSteps = nullptr;
    /// The calling family's fold (AnalysisFamily::rankFold), nullptr when it has none.
    RankFold* fold = nullptr;
    /// The window of `rank`, nullptr for a rank the analysis does not have.
    const IntervalSet* windowOf(int64_t rank) const;
};

class AnalysisFamily {
public:
    virtual ~AnalysisFamily() = default;
    virtual std::string_view name() const = 0;
    /// The categories whose events reach its scans (none: it has no scan).
    virtual std::vector<schema::Category> categories() const { return {}; }
    /// True when its scan reads bytes, peer, seq, communicator, object or count of compute or
    /// annotation events of its categories (other classes always have them).
    virtual bool needsDetails() const { return false; }
    /// A fresh scan of one rank, reading through `trace` (its worker's connection).
    virtual std::unique_ptr<RankScan> rankScan(const Trace& trace, const TraceIndex& index) const {
        (void)trace;
        (void)index;
        return nullptr;
    }
    /// A fresh fold for one analysis (nullptr: it has none); combine() gets it in ctx.fold.
    virtual std::unique_ptr<RankFold> rankFold() const { return nullptr; }
    /// Its scans of every rank, in rank order (null entries when it has no scan).
    virtual Status combine(AnalysisContext& ctx, std::vector<std::unique_ptr<RankScan>>& scans,
                           Analysis& an) const {
        (void)ctx;
        (void)scans;
        (void)an;
        return {};
    }
    virtual Status conclude(AnalysisContext& ctx, Analysis& an) const {
        (void)ctx;
        (void)an;
        return {};
    }
    virtual std::vector<advice::RuleSpec> rules() const { return {}; }
};

/// The registered families with an analysis facet (families/), in registration order.
const std::vector<std::unique_ptr<AnalysisFamily>>& analysisFamilies();

/// The categories of one class (the communication family takes every communication category).
std::vector<schema::Category> categoriesOfClass(std::string_view cls);

} // namespace hpcprof::analyzer
