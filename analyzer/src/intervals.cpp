// SPDX-License-Identifier: MIT
#include "intervals.hpp"

#include <algorithm>

namespace hpcprof::analyzer {

IntervalSet IntervalSet::fromUnsorted(std::vector<Interval> intervals) {
    IntervalSet s;
    s.m_items = std::move(intervals);
    s.normalize();
    return s;
}

IntervalSet IntervalSet::single(int64_t begin, int64_t end) {
    IntervalSet s;
    s.add(begin, end);
    return s;
}

void IntervalSet::normalize() {
    auto& v = m_items;
    std::erase_if(v, [](const Interval& i) { return i.end <= i.begin; });
    if (!std::is_sorted(v.begin(), v.end(),
                        [](const Interval& a, const Interval& b) { return a.begin < b.begin; }))
        std::sort(v.begin(), v.end(),
                  [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    size_t out = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        // Touching intervals merge too, so equal sets have one representation.
        if (out > 0 && v[i].begin <= v[out - 1].end)
            v[out - 1].end = std::max(v[out - 1].end, v[i].end);
        else
            v[out++] = v[i];
    }
    v.resize(out);
}

int64_t IntervalSet::length() const {
    int64_t total = 0;
    for (const auto& i : m_items) total += i.end - i.begin;
    return total;
}

int64_t IntervalSet::lengthIn(int64_t begin, int64_t end) const {
    if (end <= begin) return 0;
    auto it = std::upper_bound(m_items.begin(), m_items.end(), begin,
                               [](int64_t t, const Interval& i) { return t < i.end; });
    int64_t total = 0;
    for (; it != m_items.end() && it->begin < end; ++it)
        total += std::min(end, it->end) - std::max(begin, it->begin);
    return total;
}

IntervalSet IntervalSet::unite(const IntervalSet& other) const {
    IntervalSet out;
    out.m_items.reserve(m_items.size() + other.m_items.size());
    std::merge(m_items.begin(), m_items.end(), other.m_items.begin(), other.m_items.end(),
               std::back_inserter(out.m_items),
               [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    out.normalize(); // already sorted: only the linear merge pass runs
    return out;
}

IntervalSet IntervalSet::intersect(const IntervalSet& other) const {
    IntervalSet out;
    size_t i = 0, j = 0;
    const auto& a = m_items;
    const auto& b = other.m_items;
    while (i < a.size() && j < b.size()) {
        int64_t lo = std::max(a[i].begin, b[j].begin);
        int64_t hi = std::min(a[i].end, b[j].end);
        if (lo < hi) out.m_items.push_back({lo, hi});
        if (a[i].end < b[j].end)
            ++i;
        else
            ++j;
    }
    return out;
}

IntervalSet IntervalSet::subtract(const IntervalSet& other) const {
    IntervalSet out;
    const auto& b = other.m_items;
    size_t j = 0;
    for (const auto& iv : m_items) {
        int64_t cur = iv.begin;
        while (j < b.size() && b[j].end <= cur) ++j;
        size_t k = j;
        while (k < b.size() && b[k].begin < iv.end) {
            if (b[k].begin > cur) out.m_items.push_back({cur, b[k].begin});
            cur = std::max(cur, b[k].end);
            if (b[k].end > iv.end) break;
            ++k;
        }
        if (cur < iv.end) out.m_items.push_back({cur, iv.end});
        j = k;
    }
    return out;
}

IntervalSet IntervalSet::complementIn(int64_t begin, int64_t end) const {
    return single(begin, end).subtract(*this);
}

} // namespace hpcprof::analyzer
