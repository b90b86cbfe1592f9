// SPDX-License-Identifier: MIT
// Per-name totals for a top-N list (kernels, collectives, files). Merging is a sum, so the order
// ranks are added in does not matter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "recent_entries.hpp"

namespace hpcprof::analyzer {

struct TopAccumulator {
    std::unordered_map<int64_t, TopItem> items;
    /// `calls`: the calls the event stands for (a folded loop of polls is one event).
    void add(int64_t key, int64_t dur, int64_t bytes, int64_t calls = 1) {
        TopItem& t = m_recent.find(key, items);
        t.count += calls;
        t.totalNs += dur;
        t.maxNs = std::max(t.maxNs, dur);
        if (bytes > 0) t.bytes += bytes;
    }
    void merge(const TopAccumulator& other);
    /// The n largest by total time, ties by key.
    std::vector<TopItem> top(size_t n, const std::function<std::string(int64_t)>& name) const;

private:
    RecentEntries<std::unordered_map<int64_t, TopItem>> m_recent;
};

} // namespace hpcprof::analyzer
