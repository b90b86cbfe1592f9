// SPDX-License-Identifier: MIT
// Per-name totals for a top-N list (kernels, collectives, files). Merging is a sum, so the order
// ranks are added in does not matter.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

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
    /// The entries `add` found last (a rank's events cycle through a few names): their hash
    /// look-up was 2.6 % of a report. They point into this accumulator's map, so a copy or a
    /// move of it starts without them; nothing erases from the map.
    struct Recent {
        std::array<int64_t, 4> keys{};
        std::array<TopItem*, 4> entries{};
        size_t next = 0;
        Recent() = default;
        Recent(const Recent&) {}
        Recent& operator=(const Recent&) {
            entries = {};
            return *this;
        }
        TopItem& find(int64_t key, std::unordered_map<int64_t, TopItem>& items) {
            for (size_t i = 0; i < entries.size(); ++i)
                if (entries[i] && keys[i] == key) return *entries[i];
            TopItem& t = items[key];
            keys[next] = key;
            entries[next] = &t;
            next = (next + 1) % entries.size();
            return t;
        }
    } m_recent;
};

} // namespace hpcprof::analyzer
