// SPDX-License-Identifier: MIT
#include "top_list.hpp"

namespace hpcprof::analyzer {

void TopAccumulator::merge(const TopAccumulator& other) {
    for (const auto& [key, o] : other.items) {
        TopItem& t = items[key];
        t.count += o.count;
        t.totalNs += o.totalNs;
        t.maxNs = std::max(t.maxNs, o.maxNs);
        t.bytes += o.bytes;
    }
}

std::vector<TopItem> TopAccumulator::top(size_t n, const std::function<std::string(int64_t)>& name) const {
    std::vector<std::pair<int64_t, TopItem>> v(items.begin(), items.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
        return a.second.totalNs != b.second.totalNs ? a.second.totalNs > b.second.totalNs : a.first < b.first;
    });
    std::vector<TopItem> out;
    for (size_t i = 0; i < v.size() && i < n; ++i) {
        out.push_back(v[i].second);
        out.back().name = name(v[i].first);
    }
    return out;
}

} // namespace hpcprof::analyzer
