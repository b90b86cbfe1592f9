// SPDX-License-Identifier: MIT
// A stable sort that first checks whether there is anything to do. What a rank's pass collects
// mostly comes in order already (ids and tags in event id order, collective calls in instance
// order, step starts by step), and std::sort and std::stable_sort do their full work on sorted
// input: those sorts were about 5 % of a report's samples.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

namespace hpcprof::analyzer {

/// `v` sorted by `less`, equal elements in their order; only checked when already sorted.
template <class T, class Less = std::less<>>
void sortUnlessSorted(std::vector<T>& v, Less less = {}) {
    if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

} // namespace hpcprof::analyzer
