// SPDX-License-Identifier: MIT
/// The kept class summary of a trace: every rank's and every track's class shares over the whole
/// run, in kBuckets buckets, quantised to 1/255 of a bucket (the GUI's class mipmap,
/// docs/gui.md "Speed at scale"). Built once (by `hpcprof run` and `hpcprof merge` right after
/// the conversion, else by the GUI's first opening) and kept in a file next to the trace,
/// TRACE.lanes, which names the trace's size and modification time: a trace that changed does
/// not take it. The trace itself is never written (the analyzer only reads traces).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/class_shares.hpp"

namespace hpcprof::analyzer {

struct ClassSummary {
    static constexpr int kBuckets = 2048;
    int64_t begin = 0, bucketNs = 1;
    int buckets = 0;
    /// Quantised shares, buckets * kTimeClassCount bytes, by bucket then TimeClass; a bucket's
    /// shares add up to 255 (its uncovered part, before the first event of a track, to less).
    using Shares = std::vector<uint8_t>;
    std::unordered_map<int64_t, Shares> groups; ///< by process id: its rank's summary
    std::unordered_map<int64_t, Shares> tracks; ///< by track id
};

/// Exact class nanoseconds to shares of 255 (cumulative rounding: a bucket's quantised shares
/// add up to its rounded total).
ClassSummary::Shares quantizeShares(const ClassBuckets& b);

/// The grid of the whole run [begin, end): kBuckets buckets from `begin`, none empty.
ClassSummary summaryGrid(int64_t begin, int64_t end);

/// Builds the summary of [begin, end) (the trace's time bounds) from the events: one sweep per
/// track, ranks over `threads` workers (ClassShareQuery::allRanks; 0: the cores, at most 8).
Result<ClassSummary> buildClassSummary(ClassShareQuery& query, const TraceIndex& index, int64_t begin, int64_t end,
                                       int threads = 0);

/// TRACE.lanes.
std::string classSummaryPath(const std::string& tracePath);
/// The summary kept next to `tracePath`, when it was built from the trace as it is now (same
/// size and modification time); nullopt when absent, stale or damaged.
std::optional<ClassSummary> readClassSummary(const std::string& tracePath);
/// Writes it next to the trace (a temporary file renamed into place); false when that fails
/// (a read-only folder: the caller keeps it in memory).
bool writeClassSummary(const std::string& tracePath, const ClassSummary& summary);

/// Builds the summary of the trace at `tracePath` and keeps it next to it: the one call of the
/// convert paths, right after the trace is written (a failure leaves no file: the GUI builds it
/// on first opening).
Status keepClassSummary(const std::string& tracePath, int threads = 0);

} // namespace hpcprof::analyzer
