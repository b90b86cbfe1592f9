// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/class_shares.hpp"

#include <algorithm>

#include "attribution.hpp"
#include "rank_units.hpp"

namespace hpcprof::analyzer {

struct ClassShareQuery::Units {
    detail::RankUnits units;
};

namespace {

/// [begin, end) of `buckets` buckets, as one interval set (the attribution's window).
IntervalSet spanOf(int64_t begin, int64_t bucketNs, int buckets) {
    return IntervalSet::single(begin, begin + bucketNs * int64_t(buckets));
}

/// The partition of `a` measured bucket by bucket.
ClassBuckets bucketize(const Attribution& a, int64_t begin, int64_t bucketNs, int buckets) {
    ClassBuckets out;
    out.begin = begin;
    out.bucketNs = bucketNs;
    out.buckets = buckets;
    out.ns.assign(size_t(buckets) * kTimeClassCount, 0);
    for (int c = 0; c < kTimeClassCount; ++c) {
        const auto& items = a.partition[c].items();
        // One walk over the class's intervals, each split over the buckets it crosses.
        for (const Interval& iv : items) {
            int64_t t = std::max(iv.begin, begin);
            while (t < iv.end) {
                const int64_t b = (t - begin) / bucketNs;
                if (b >= buckets) break;
                const int64_t bucketEnd = begin + (b + 1) * bucketNs;
                const int64_t e = std::min(iv.end, bucketEnd);
                out.ns[size_t(b) * kTimeClassCount + size_t(c)] += e - t;
                t = e;
            }
        }
    }
    return out;
}


} // namespace

ClassShareQuery::ClassShareQuery(const Trace& trace, const TraceIndex& index)
    : m_trace(trace), m_index(index), m_query(trace), m_units(std::make_unique<Units>()) {}

ClassShareQuery::~ClassShareQuery() = default;

Result<std::unique_ptr<ClassShareQuery>> ClassShareQuery::open(const Trace& trace, const TraceIndex& index) {
    auto units = detail::rankUnits(trace, index);
    if (!units) return units.status();
    std::unique_ptr<ClassShareQuery> q(new ClassShareQuery(trace, index));
    q->m_units->units = std::move(*units);
    return q;
}

std::vector<int64_t> ClassShareQuery::ranks() const {
    std::vector<int64_t> out;
    for (const auto& [r, u] : m_units->units.units) out.push_back(r);
    return out;
}

std::optional<int64_t> ClassShareQuery::rankOfProcess(int64_t processId) const {
    const auto& procs = m_index.processes();
    for (size_t i = 0; i < procs.size(); ++i) {
        if (procs[i].id != processId) continue;
        if (i >= m_units->units.unitOf.size() || !m_units->units.unitOf[i]) return std::nullopt;
        const int64_t r = *m_units->units.unitOf[i];
        // Workers belong to a rank but are not part of its summary.
        bool member = false;
        auto it = m_units->units.units.find(r);
        if (it != m_units->units.units.end())
            for (const ProcessInfo* p : it->second.processes) member = member || p->id == processId;
        return member ? std::optional<int64_t>(r) : std::nullopt;
    }
    return std::nullopt;
}

bool ClassShareQuery::gapsAreCompute(int64_t trackId) const {
    for (const auto& [r, u] : m_units->units.units)
        if (!u.gpu && u.referenceTracks.count(trackId)) return true;
    return false;
}

Result<RankClassBuckets> ClassShareQuery::rank(int64_t rank, int64_t begin, int64_t bucketNs, int buckets,
                                               bool withTracks) {
    auto it = m_units->units.units.find(rank);
    if (it == m_units->units.units.end()) return Status::error("no rank " + std::to_string(rank));
    if (bucketNs <= 0 || buckets <= 0) return Status::error("class buckets: empty bucket grid");
    const detail::RankUnit& u = it->second;
    const IntervalSet window = spanOf(begin, bucketNs, buckets);
    const int64_t end = begin + bucketNs * int64_t(buckets);
    RankClassBuckets out;
    out.rank = rank;
    out.gpu = u.gpu;
    TimelineSets rankSets;
    rankSets.gpu = u.gpu;
    for (const TrackInfo* t : u.tracks) {
        const bool gpuTrack = t->kind == TrackKind::GpuStream;
        const bool ref = u.gpu ? gpuTrack : u.referenceTracks.count(t->id) > 0;
        auto slices = m_query.slices(t->id, begin, end, 0);
        if (!slices) return slices.status();
        TimelineSets own;
        own.gpu = !(ref && !u.gpu); // only a CPU rank's main thread computes outside its calls
        for (const TimelineSlice& s : slices->slices) {
            const EventClass c = m_index.categoryClass(s.categoryId);
            if (c == EventClass::Annotation) continue;
            rankSets.all[int(c)].add(s.ts, s.ts + s.dur);
            if (ref) rankSets.reference[int(c)].add(s.ts, s.ts + s.dur);
            if (withTracks) {
                own.all[int(c)].add(s.ts, s.ts + s.dur);
                own.reference[int(c)].add(s.ts, s.ts + s.dur);
            }
        }
        if (!withTracks) continue;
        own.normalize();
        out.tracks[t->id] = bucketize(attribute(own, window, u.active), begin, bucketNs, buckets);
    }
    rankSets.normalize();
    out.summary = bucketize(attribute(rankSets, window, u.active), begin, bucketNs, buckets);
    return out;
}

} // namespace hpcprof::analyzer
