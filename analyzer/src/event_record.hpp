// SPDX-License-Identifier: MIT
// One event as the analyses see it, and what a scan found wrong with the events it read
// (internal to the analyzer: track_scan.hpp reads them through SQL, event_page_reader.hpp below it).
#pragma once

#include <cstdint>

#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::analyzer {

/// One event as the analyses see it. Absent optional columns are -1 (bytes, peer, seq,
/// correlation id, ...).
struct EventRecord {
    int64_t id = 0;
    int64_t ts = 0;
    int64_t dur = 0;
    int64_t bytes = -1;
    int64_t seq = -1;
    int64_t communicatorId = -1;
    int64_t objectId = -1;
    int64_t correlationId = -1; ///< joins a CUDA API call to the GPU work it launched
    int64_t nameId = 0;
    int32_t peer = -1;
    int32_t depth = 0;
    int32_t categoryId = 0;
    int32_t count = 1;
    EventClass cls = EventClass::Annotation;
    int64_t end() const { return ts + dur; }
};

/// Problems found while scanning events: counted, reported as data-quality warnings.
struct ScanQuality {
    int64_t negativeDurations = 0; ///< stored dur < 0: read as 0
    int64_t unsortedEvents = 0;    ///< ts smaller than the previous event's on the same track
    int64_t tracksWithoutIdRange = 0;
    int64_t unknownCategories = 0;
    int64_t timesOutOfRange = 0;   ///< |ts| or |dur| >= kTimeLimitNs: skipped, not passed on
    int64_t outsideRun = 0;        ///< counted by the caller, which knows the run's span
};

} // namespace hpcprof::analyzer
