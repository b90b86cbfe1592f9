// SPDX-License-Identifier: MIT
/// Level-of-detail range queries for timelines (the GUI's data source): real slices wider than
/// the resolution, per-(depth, bucket) aggregates for everything narrower.
///
/// A track's events are the id range [first_event_id, last_event_id] sorted by ts, so the window
/// is found by binary search on the id with point lookups (O(log n) primary-key reads), then only
/// the events inside it are read. Slices that start before t0 but reach into the window are found
/// through the track's longest duration (one scan per track, cached).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

struct TimelineSlice {
    int64_t eventId = 0, ts = 0, dur = 0, nameId = 0;
    int32_t depth = 0, categoryId = 0;
};

/// Events narrower than the resolution, folded per depth and bucket [begin, begin + resolution).
struct TimelineAggregate {
    int32_t depth = 0;
    int64_t bucketBegin = 0;
    int64_t count = 0;
    int64_t maxDur = 0;
    int64_t representativeId = 0; ///< the longest event of the bucket
    int32_t representativeCategoryId = 0; ///< its category (what colour the bucket takes)
};

struct TimelineSlices {
    std::vector<TimelineSlice> slices;         ///< by ts
    std::vector<TimelineAggregate> aggregates; ///< by depth, then bucket
    int64_t pointLookups = 0;                  ///< primary-key reads the binary searches made
};

class TimelineQuery {
public:
    explicit TimelineQuery(const Trace& trace) : m_trace(trace) {}

    /// Events of `trackId` overlapping [t0, t1); slices with dur >= resolutionNs are returned as
    /// they are, the others aggregated. resolutionNs <= 0 returns every event as a slice.
    Result<TimelineSlices> slices(int64_t trackId, int64_t t0, int64_t t1, int64_t resolutionNs);

private:
    const Trace& m_trace;
    std::map<int64_t, int64_t> m_maxDur; ///< per track
};

/// One-shot form of TimelineQuery::slices.
Result<TimelineSlices> timelineSlices(const Trace& trace, int64_t trackId, int64_t t0, int64_t t1,
                                      int64_t resolutionNs);

} // namespace hpcprof::analyzer
