// SPDX-License-Identifier: MIT
/// Interval algebra on half-open time intervals [begin, end) in ns: the building block of the
/// attribution. An IntervalSet is kept normalized (sorted, disjoint, non-touching, non-empty).
///
/// Complexity: normalize() sorts, O(n log n); unite/intersect/subtract are linear merges of two
/// normalized sets, O(n + m); length() is O(n). Nothing here allocates per element beyond the
/// result vector.
#pragma once

#include <cstddef>
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
    /// Adds [begin, end) at the end of a normalized set (begin at or past its last end): the set
    /// stays normalized, an interval touching the last one joins it.
    void append(int64_t begin, int64_t end) {
        if (end <= begin) return;
        if (!m_items.empty() && m_items.back().end == begin) m_items.back().end = end;
        else m_items.push_back({begin, end});
    }
    /// Sorts and merges the intervals added since the last normalization.
    void normalize();
    /// Room for `n` intervals without growing.
    void reserve(size_t n) { m_items.reserve(n); }
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
