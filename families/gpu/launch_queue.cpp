// SPDX-License-Identifier: MIT
// Launch latency and launch-queue depth of one rank (kernel_stats.hpp): kernels joined to the
// CUDA API calls that launched them by correlation id, exact nearest-rank percentiles, and one
// sweep over the launch and start instants for the queue depth.
#include <algorithm>

#include "kernel_stats.hpp"

namespace hpcprof::analyzer {

int64_t nearestRank(const std::vector<int64_t>& sorted, int p) {
    if (sorted.empty()) return 0;
    // The smallest value with at least p % of the values at or below it: rank ceil(p n / 100).
    const size_t n = sorted.size();
    size_t rank = (size_t(p) * n + 99) / 100;
    return sorted[std::clamp<size_t>(rank, 1, n) - 1];
}

LatencyStats latencyStats(const std::vector<int64_t>& sorted) {
    LatencyStats s;
    s.count = int64_t(sorted.size());
    if (sorted.empty()) return s;
    double sum = 0;
    for (int64_t v : sorted) {
        sum += double(v);
        if (v < 0) ++s.negative;
    }
    s.meanNs = sum / double(s.count);
    s.medianNs = nearestRank(sorted, 50);
    s.p95Ns = nearestRank(sorted, 95);
    s.maxNs = sorted.back();
    return s;
}

LaunchJoin joinLaunches(std::vector<std::pair<int64_t, int64_t>>& calls,
                        const std::vector<LaunchedKernel>& kernels) {
    std::sort(calls.begin(), calls.end());
    LaunchJoin j;
    j.byKey.reserve(kernels.size());
    for (const LaunchedKernel& k : kernels) {
        auto it = std::lower_bound(calls.begin(), calls.end(), std::pair<int64_t, int64_t>{k.correlationId, INT64_MIN});
        if (k.correlationId < 0 || it == calls.end() || it->first != k.correlationId) {
            ++j.unmatched;
            continue;
        }
        j.launches.emplace_back(it->second, k.ts);
        j.byKey.emplace_back(k.key, k.ts - it->second);
    }
    std::sort(j.byKey.begin(), j.byKey.end());
    j.latencies.reserve(j.byKey.size());
    for (const auto& kv : j.byKey) j.latencies.push_back(kv.second);
    std::sort(j.latencies.begin(), j.latencies.end());
    return j;
}

namespace {

/// The depth's running integrals: over the window, and per bucket of the window's span.
struct QueueSweep {
    const IntervalSet& window;
    int64_t begin, bucketNs;
    QueueDepthStats& out;
    std::vector<int64_t> bucketArea;

    /// Depth `d` held over [a, b).
    void segment(int64_t d, int64_t a, int64_t b, int64_t& area) {
        if (d <= 0 || b <= a) return;
        const int64_t inWindow = window.lengthIn(a, b);
        if (inWindow <= 0) return;
        area += d * inWindow;
        out.max = std::max(out.max, d);
        const int64_t n = int64_t(bucketArea.size());
        int64_t k = std::clamp<int64_t>((a - begin) / bucketNs, 0, n - 1);
        for (; k < n && begin + k * bucketNs < b; ++k) {
            const int64_t o = window.lengthIn(std::max(a, begin + k * bucketNs), std::min(b, begin + (k + 1) * bucketNs));
            if (o <= 0) continue;
            bucketArea[size_t(k)] += d * o;
            out.maxSeries[size_t(k)] = std::max(out.maxSeries[size_t(k)], d);
        }
    }
};

} // namespace

QueueDepthStats queueDepth(const std::vector<std::pair<int64_t, int64_t>>& launches, const IntervalSet& window,
                           int buckets) {
    QueueDepthStats q;
    if (window.empty() || buckets <= 0) return q;
    q.beginNs = window.items().front().begin;
    const int64_t span = window.items().back().end - q.beginNs;
    q.bucketNs = std::max<int64_t>(1, (span + buckets - 1) / buckets);
    q.meanSeries.assign(size_t(buckets), 0.0);
    q.maxSeries.assign(size_t(buckets), 0);
    // +1 at a launch, -1 at the kernel's start; at one instant the starts go first, so a kernel
    // that starts as it is launched is never counted as queued.
    std::vector<std::pair<int64_t, int>> steps;
    steps.reserve(launches.size() * 2);
    for (const auto& [launch, start] : launches)
        if (start > launch) {
            steps.emplace_back(launch, +1);
            steps.emplace_back(start, -1);
        }
    std::sort(steps.begin(), steps.end());
    QueueSweep sweep{window, q.beginNs, q.bucketNs, q, std::vector<int64_t>(size_t(buckets), 0)};
    int64_t depth = 0, area = 0;
    for (size_t i = 0; i < steps.size();) {
        const int64_t t = steps[i].first;
        for (; i < steps.size() && steps[i].first == t; ++i) depth += steps[i].second;
        if (i < steps.size()) sweep.segment(depth, t, steps[i].first, area);
    }
    const int64_t windowNs = window.length();
    q.mean = windowNs > 0 ? double(area) / double(windowNs) : 0.0;
    for (size_t k = 0; k < size_t(buckets); ++k) {
        const int64_t kb = q.beginNs + int64_t(k) * q.bucketNs;
        const int64_t covered = window.lengthIn(kb, kb + q.bucketNs);
        q.meanSeries[k] = covered > 0 ? double(sweep.bucketArea[k]) / double(covered) : 0.0;
    }
    return q;
}

} // namespace hpcprof::analyzer
