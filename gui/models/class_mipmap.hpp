// SPDX-License-Identifier: MIT
// Honest pixels at any scale: the share of each time class per time bucket, for every rank's
// summary row and every track (analyzer::ClassShareQuery: the analyzer's exclusive breakdown cut
// into buckets, so a run that computes half the time looks half compute). The whole run at
// kMipmapBuckets buckets is the analyzer's class summary (analyzer/class_summary.hpp), kept in a
// file next to the trace (TRACE.lanes) by the conversion, or built by the first opening on the
// fetch thread when it is absent or stale; views finer than its buckets ask the analyzer for their
// window.
#pragma once

#include <QString>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/class_shares.hpp"
#include "hpcprof/analyzer/class_summary.hpp"

namespace hpcprof::gui {

/// A number no other strip built in this process has: what the painter's row cache knows a strip
/// by (an address can be reused by the next fetch's strip).
uint64_t nextStripSerial();

/// Class shares per bucket, quantised to 1/255 of the bucket.
struct ShareStrip {
    uint64_t serial = nextStripSerial(); ///< a copy keeps it: its shares are the same
    int64_t begin = 0, bucketNs = 1;
    int buckets = 0;
    std::vector<uint8_t> share; ///< buckets * kTimeClassCount, by bucket then TimeClass
    /// Per bucket: the classes' colours mixed by share (the heat map of low summary rows).
    std::vector<uint32_t> blend;
    /// No class but idle anywhere: a lane of annotations only (CPU ops, NVTX), or of nothing.
    bool onlyIdle = true;

    double at(int bucket, analyzer::TimeClass c) const {
        return share[size_t(bucket) * analyzer::kTimeClassCount + size_t(c)] / 255.0;
    }
    /// Share of class `c` over [t0, t1) (time-weighted over the buckets it covers; 0 outside).
    double shareIn(int64_t t0, int64_t t1, analyzer::TimeClass c) const;
    /// Every class's share over [t0, t1), summing to the covered part (at most 1).
    void sharesIn(int64_t t0, int64_t t1, double out[analyzer::kTimeClassCount]) const;
};

using ShareStripPtr = std::shared_ptr<const ShareStrip>;

/// Quantises exact class nanoseconds to shares (each bucket's shares round to a sum of 255).
ShareStrip toShareStrip(const analyzer::ClassBuckets& b);
/// The classes of [t0, t1) for a tooltip, largest first: "comm 62 %, compute 38 %" (classes
/// under 0.5 % left out); empty when the strip does not cover the span.
QString sharesText(const ShareStrip& s, int64_t t0, int64_t t1);
/// Fills `s.blend` from its shares.
void blendBuckets(ShareStrip& s);

struct ClassMipmap {
    static constexpr int kMipmapBuckets = analyzer::ClassSummary::kBuckets;
    int64_t begin = 0, bucketNs = 1;
    int buckets = 0;
    std::unordered_map<int64_t, ShareStripPtr> groups; ///< by process id: its rank's summary
    std::unordered_map<int64_t, ShareStripPtr> tracks; ///< by track id
    double buildMs = 0;
    bool fromCache = false;
};

using ClassMipmapPtr = std::shared_ptr<const ClassMipmap>;

/// Builds the whole-run mipmap of a trace from its events (every rank, every track): one sweep
/// per track, ranks spread over `threads` workers (0: the machine's cores, at most 8).
Result<std::shared_ptr<ClassMipmap>> buildClassMipmap(analyzer::ClassShareQuery& query,
                                                      const analyzer::TraceIndex& index, int64_t begin,
                                                      int64_t end, int threads = 0);
/// The strips of a summary (its shares moved in), each blended once.
std::shared_ptr<ClassMipmap> mipmapOf(analyzer::ClassSummary&& summary);
/// The same mipmap rank after rank through window queries (ClassShareQuery::rank): the
/// reference the sweep is tested and benchmarked against.
Result<std::shared_ptr<ClassMipmap>> buildClassMipmapByRank(analyzer::ClassShareQuery& query,
                                                            const analyzer::TraceIndex& index, int64_t begin,
                                                            int64_t end);

/// The summary kept next to `tracePath` (TRACE.lanes, analyzer::readClassSummary), read back when
/// it matches the trace's size and modification time; null when absent, stale or damaged.
std::string mipmapCachePath(const std::string& tracePath);
std::shared_ptr<ClassMipmap> readMipmapCache(const std::string& tracePath);

} // namespace hpcprof::gui
