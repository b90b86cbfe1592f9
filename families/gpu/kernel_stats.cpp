// SPDX-License-Identifier: MIT
// Kernel statistics of one rank: the per-name accumulators, the copies by direction and the
// kernel classes (kernel_stats.hpp). The launch join and the queue depth: launch_queue.cpp.
#include "gpu_section.hpp"
#include "kernel_stats.hpp"

#include <algorithm>
#include <cmath>

#include "trace_access.hpp"

namespace hpcprof::analyzer {

KernelStats::KernelStats(const Trace& trace)
    // A copy's direction lives in event_arg (its primary key starts with event_id): one range
    // read per GPU track instead of a lookup per copy.
    : m_copyKinds(detail::db(trace), "SELECT event_id, value FROM event_arg WHERE event_id BETWEEN ? AND ?"
                                     " AND key = 'copy_kind'") {}

void KernelStats::beginTrack(const TrackInfo& t, bool gpuTrack) {
    m_trackCopyKinds.clear();
    if (!gpuTrack || !t.firstEventId || !t.lastEventId || !m_copyKinds.valid()) return;
    m_copyKinds.reset();
    m_copyKinds.bind(1, *t.firstEventId);
    m_copyKinds.bind(2, *t.lastEventId);
    while (m_copyKinds.step()) m_trackCopyKinds.emplace_back(m_copyKinds.int64(0), m_copyKinds.text(1));
    std::sort(m_trackCopyKinds.begin(), m_trackCopyKinds.end());
}

void KernelStats::onApi(const EventRecord& e) {
    if (e.correlationId >= 0) m_calls.emplace_back(e.correlationId, e.ts);
}

void KernelStats::onKernel(const EventRecord& e, KernelClass cls) {
    const int64_t key = e.nameId * 2 + (cls == KernelClass::Communication ? 1 : 0);
    NameAcc& a = m_names[key];
    ++a.count;
    a.totalNs += e.dur;
    a.minNs = std::min(a.minNs, e.dur);
    a.maxNs = std::max(a.maxNs, e.dur);
    const double delta = double(e.dur) - a.mean;
    a.mean += delta / double(a.count);
    a.m2 += delta * (double(e.dur) - a.mean);
    ++m_classCount[int(cls)];
    m_classNs[int(cls)] += e.dur;
    m_kernels.push_back({e.correlationId, e.ts, key});
}

void KernelStats::onCopy(const EventRecord& e, bool memset) {
    std::string direction = "memset";
    if (!memset) {
        auto it = std::lower_bound(m_trackCopyKinds.begin(), m_trackCopyKinds.end(),
                                   std::pair<int64_t, std::string>{e.id, std::string()});
        direction = it != m_trackCopyKinds.end() && it->first == e.id ? it->second : "unknown";
    }
    CopyDirectionStats& c = m_copies[direction];
    c.direction = direction;
    ++c.count;
    c.bytes += std::max<int64_t>(e.bytes, 0);
    c.durNs += e.dur;
    ++m_classCount[int(KernelClass::Memory)];
    m_classNs[int(KernelClass::Memory)] += e.dur;
}

void KernelStats::finish(const RankEnd& end) {
    m_result.rank = end.breakdown.rank;
    LaunchJoin join = joinLaunches(m_calls, m_kernels);
    release(m_calls);
    release(m_kernels);
    m_result.launch = latencyStats(join.latencies);
    m_result.unmatchedKernels = join.unmatched;
    if (!join.launches.empty()) m_result.queue = queueDepth(join.launches, end.window, kQueueBuckets);
    finishNames(join);
    m_latencies = std::move(join.latencies);
    for (auto& [dir, c] : m_copies) m_result.copies.push_back(std::move(c));
    m_copies.clear();
    finishClasses(end);
    m_copyKinds = schema::Statement(); // the worker's connection closes when the pass ends
    release(m_trackCopyKinds);
}

// One entry per (name, class) with its launch latencies (byKey is sorted by key, then value).
void KernelStats::finishNames(const LaunchJoin& join) {
    std::vector<std::pair<int64_t, NameAcc>> names(m_names.begin(), m_names.end());
    m_names.clear();
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto lat = join.byKey.begin();
    std::vector<int64_t> values;
    for (const auto& [key, a] : names) {
        KernelNameStats k;
        k.cls = (key & 1) ? KernelClass::Communication : KernelClass::Compute;
        k.count = a.count;
        k.totalNs = a.totalNs;
        k.minNs = a.minNs;
        k.maxNs = a.maxNs;
        k.meanNs = a.mean;
        k.stdNs = a.count > 1 ? std::sqrt(a.m2 / double(a.count - 1)) : 0.0;
        values.clear();
        while (lat != join.byKey.end() && lat->first < key) ++lat;
        for (; lat != join.byKey.end() && lat->first == key; ++lat) values.push_back(lat->second);
        k.launch = latencyStats(values);
        m_result.kernels.push_back(std::move(k));
        m_nameIds.push_back(key / 2);
    }
}

// The classes' busy time and overlaps: on a GPU rank the reference timeline is its GPU streams,
// so its compute, communication and memory sets are exactly the kernels, NCCL kernels and copies.
void KernelStats::finishClasses(const RankEnd& end) {
    for (int c = 0; c < kKernelClassCount; ++c) {
        m_result.classes[c].count = m_classCount[c];
        m_result.classes[c].totalNs = m_classNs[c];
    }
    if (!end.breakdown.gpu) return;
    const auto& ref = end.sets.reference;
    const IntervalSet compute = ref[int(EventClass::Compute)].intersect(end.window);
    const IntervalSet comm = ref[int(EventClass::Communication)].intersect(end.window);
    const IntervalSet memory = ref[int(EventClass::Memory)].intersect(end.window);
    m_result.classes[int(KernelClass::Compute)].busyNs = compute.length();
    m_result.classes[int(KernelClass::Communication)].busyNs = comm.length();
    m_result.classes[int(KernelClass::Memory)].busyNs = memory.length();
    m_result.commComputeOverlapNs = comm.intersect(compute).length();
    m_result.memoryComputeOverlapNs = memory.intersect(compute).length();
    m_result.commMemoryOverlapNs = comm.intersect(memory).length();
}

void addKernelRank(const TraceIndex& index, KernelStats& rank, GpuSection& section,
                   std::vector<int64_t>& latencies) {
    if (rank.empty()) return;
    GpuKernelRank& r = rank.result();
    for (size_t i = 0; i < r.kernels.size(); ++i) r.kernels[i].name = index.string(rank.nameIds()[i]);
    std::sort(r.kernels.begin(), r.kernels.end(), [](const KernelNameStats& a, const KernelNameStats& b) {
        return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
    });
    latencies.insert(latencies.end(), rank.latencies().begin(), rank.latencies().end());
    release(rank.latencies());
    section.ranks.push_back(std::move(r));
}

void finishKernelSection(GpuSection& section, std::vector<int64_t>& latencies) {
    std::sort(latencies.begin(), latencies.end());
    section.launch = latencyStats(latencies);
    release(latencies);
    std::map<std::string, CopyDirectionStats> copies;
    for (const GpuKernelRank& r : section.ranks)
        for (const CopyDirectionStats& c : r.copies) {
            CopyDirectionStats& all = copies[c.direction];
            all.direction = c.direction;
            all.count += c.count;
            all.bytes += c.bytes;
            all.durNs += c.durNs;
        }
    for (auto& [dir, c] : copies) section.copies.push_back(std::move(c));
}

} // namespace hpcprof::analyzer
