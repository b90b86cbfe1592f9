// SPDX-License-Identifier: MIT
// Look-ups in a sorted vector by keys that mostly come in increasing order: a rank's calls in
// the order the scan met them, looked up among the rank's event ids (message tags, small
// calls). Each search gallops forward from where the last one ended (1, 2, 4, ... elements,
// then a binary search in the last step), so a run of n increasing keys costs about
// n log(average gap) instead of n log(size), and touches memory in order; a key below the
// previous one searches the whole vector again. Binary searches per message were ~6 % of the
// analysis of generated jobs with many messages (issue 22).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace hpcprof::analyzer {

template <class T, class Less = std::less<>>
class ForwardSearch {
public:
    explicit ForwardSearch(const std::vector<T>& sorted, Less less = {}) : m_v(sorted), m_less(less) {}

    /// The first element not less than `key` (as std::lower_bound), its index; size() if none.
    template <class Key>
    size_t lowerBound(const Key& key) {
        const size_t n = m_v.size();
        if (m_at > 0 && !m_less(m_v[m_at - 1], key)) m_at = 0; // a key below the last found: from the start
        size_t lo = m_at, step = 1;
        while (lo + step < n && m_less(m_v[lo + step - 1], key)) {
            lo += step;
            step *= 2;
        }
        const auto first = m_v.begin() + std::ptrdiff_t(lo), last = m_v.begin() + std::ptrdiff_t(std::min(n, lo + step));
        m_at = size_t(std::lower_bound(first, last, key, m_less) - m_v.begin());
        return m_at;
    }

private:
    const std::vector<T>& m_v;
    Less m_less;
    size_t m_at = 0;
};

} // namespace hpcprof::analyzer
