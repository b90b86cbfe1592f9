// SPDX-License-Identifier: MIT
/// Attribution of one rank's time to compute, communication, I/O, memory, sync and idle, per
/// timeline. The reference timeline is the GPU (union of the rank's GPU streams) for GPU ranks,
/// and the main CPU thread for CPU-only ranks. Definitions: docs/analysis.md, "Attribution".
///
/// Complexity: each set is built in O(n log n) by IntervalSet; the partition is one sweep over the
/// boundaries of all of them (O(n k), k <= 18 sets), so one rank costs O(n log n) in its own event
/// count and nothing else.
#pragma once

#include "hpcprof/analyzer/analysis_types.hpp"
#include "intervals.hpp"
#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::analyzer {

inline constexpr int kEventClassCount = 7; // EventClass values

/// The interval sets of one rank, by EventClass.
struct TimelineSets {
    bool gpu = false;
    /// Union over every track of the rank (CPU threads, GPU streams, NIC queues).
    IntervalSet all[kEventClassCount];
    /// Reference timeline: GPU ranks: the GPU stream tracks; CPU ranks: the main thread.
    IntervalSet reference[kEventClassCount];
    void normalize();
};

struct Attribution {
    int64_t exclusive[kTimeClassCount] = {};
    IntervalSet partition[kTimeClassCount]; ///< the instants of each exclusive class
    int64_t windowNs = 0, activeNs = 0;
    int64_t commTotalNs = 0, commOverlappedNs = 0, ioTotalNs = 0, ioOverlappedNs = 0;
    int64_t memoryTotalNs = 0, syncTotalNs = 0, setupTotalNs = 0, gpuIdleNs = 0;
    IntervalSet gpuIdle; ///< GPU ranks: the active instants with no GPU activity (gpuIdleNs long)
};

/// Splits `window` into the exclusive classes. `active` is the part of the window in which the
/// rank's process existed (the rest is idle). Without `totals` only the partition and the
/// exclusive times are computed (the class buckets of the timeline): the totals, overlaps and
/// GPU idle stay 0, and on a CPU timeline (`sets.gpu` false) `sets.all` is not read.
Attribution attribute(const TimelineSets& sets, const IntervalSet& window, const IntervalSet& active,
                      bool totals = true);

/// Dominant class per bucket of [begin, end) split into `buckets` equal parts; 255 where the
/// bucket has no window time at all.
std::vector<uint8_t> overviewStrip(const Attribution& a, int64_t begin, int64_t end, int buckets);

} // namespace hpcprof::analyzer
