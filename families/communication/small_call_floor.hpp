// SPDX-License-Identifier: MIT
// What aggregating small messages can give back: each call's fixed cost (latency, software
// overhead), not the time a call waits for a CPU, for its partner or for a rendezvous. A call
// costs at least what the fastest calls of its kind cost, so the low tail of each name's
// durations bounds the per-call cost; the sum over calls of that floor bounds the gain
// (LogP: k messages of n bytes cost k (a + n/b), one of k n bytes a + k n/b).
//
// Kept per call name as a log-scale histogram (4 buckets per doubling, 1 ns to ~18 min):
// bounded memory whatever the number of calls.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <unordered_map>

namespace hpcprof::families {

class SmallCallFloor {
public:
    /// The share of each name's calls at or below its floor (the 10th percentile).
    static constexpr double kFloorQuantile = 0.10;

    void add(int64_t nameId, int64_t durNs, int64_t calls) {
        Histogram& h = m_byName[nameId];
        h.calls += calls;
        h.buckets[bucketOf(durNs)] += uint64_t(calls);
    }

    /// Sum over names of calls x the name's floor (lower edge of the bucket that holds its 10th
    /// percentile): at most what fusing or packing these calls could remove.
    int64_t floorNs() const {
        int64_t total = 0;
        for (const auto& [name, h] : m_byName) total += h.calls * lowerEdge(quantileBucket(h));
        return total;
    }

    /// Test hook: the floor of one name.
    int64_t floorOf(int64_t nameId) const {
        auto it = m_byName.find(nameId);
        return it == m_byName.end() ? 0 : lowerEdge(quantileBucket(it->second));
    }

private:
    static constexpr int kPerDoubling = 4, kBuckets = 40 * kPerDoubling + 1;
    struct Histogram {
        int64_t calls = 0;
        std::array<uint64_t, kBuckets> buckets{};
    };

    /// Bucket 0: 0 ns; bucket b > 0 holds [edge(b), edge(b + 1)).
    static int bucketOf(int64_t ns) {
        if (ns <= 0) return 0;
        const uint64_t v = uint64_t(ns);
        const int octave = std::bit_width(v) - 1; // 2^octave <= v < 2^(octave + 1)
        const int sub = octave >= 2 ? int((v >> (octave - 2)) & 3) : int(v & ((1u << octave) - 1)) << (2 - octave);
        const int b = 1 + octave * kPerDoubling + sub;
        return b < kBuckets ? b : kBuckets - 1;
    }
    static int64_t lowerEdge(int b) {
        if (b <= 0) return 0;
        const int octave = (b - 1) / kPerDoubling, sub = (b - 1) % kPerDoubling;
        return (int64_t(1) << octave) + ((int64_t(sub) << octave) >> 2);
    }
    static int quantileBucket(const Histogram& h) {
        const double want = kFloorQuantile * double(h.calls);
        uint64_t seen = 0;
        for (int b = 0; b < kBuckets; ++b) {
            seen += h.buckets[size_t(b)];
            if (double(seen) >= want && seen > 0) return b;
        }
        return 0;
    }

    std::unordered_map<int64_t, Histogram> m_byName;
};

} // namespace hpcprof::families
