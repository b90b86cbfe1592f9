// SPDX-License-Identifier: MIT
/// Interval algebra on half-open time intervals [begin, end) in ns: the building block of the
/// attribution. An IntervalSet is kept normalized (sorted, disjoint, non-touching, non-empty).
///
/// Complexity: normalize() sorts, O(n log n); unite/intersect/subtract are linear merges of two
/// normalized sets, O(n + m); length() is O(n). Nothing here allocates per element beyond the
/// result vector.
#pragma once

#include <cstdint>
#include <vector>

namespace hpcprof::analyzer {

struct Interval {
    int64_t begin = 0;
    int64_t end = 0; ///< exclusive
    int64_t length() const { return end > begin ? end - begin : 0; }
    bool operator==(const Interval&) const = default;
};

class IntervalSet {
public:
    IntervalSet() = default;
    /// Builds a normalized set from arbitrary (unsorted, overlapping, empty) intervals.
    static IntervalSet fromUnsorted(std::vector<Interval> intervals);
    /// One interval (empty set when end <= begin).
    static IntervalSet single(int64_t begin, int64_t end);

    /// Adds an interval; call normalize() before using the set again.
    void add(int64_t begin, int64_t end) {
        if (end > begin) m_items.push_back({begin, end});
    }
    /// Sorts and merges the intervals added since the last normalization.
    void normalize();
    /// Empties the set, keeping its memory for reuse.
    void clear() { m_items.clear(); }

    const std::vector<Interval>& items() const { return m_items; }
    bool empty() const { return m_items.empty(); }
    /// Total covered length in ns.
    int64_t length() const;
    /// Covered length inside [begin, end) (binary search, then a walk over the overlap).
    int64_t lengthIn(int64_t begin, int64_t end) const;

    IntervalSet unite(const IntervalSet& other) const;
    IntervalSet intersect(const IntervalSet& other) const;
    IntervalSet subtract(const IntervalSet& other) const;
    /// The complement inside [begin, end).
    IntervalSet complementIn(int64_t begin, int64_t end) const;

private:
    std::vector<Interval> m_items;
};

} // namespace hpcprof::analyzer
