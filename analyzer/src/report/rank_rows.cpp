// SPDX-License-Identifier: MIT
// Which rows of a per-rank table the text, markdown and HTML reports show (issue 22): every rank
// up to kAllRankRows; beyond, a summary a person can read at 1,024 ranks: the distribution of the
// table's key, the ranks with the largest and smallest key, the outliers, and how many rows are
// left out. JSON always has every rank.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "writer_parts.hpp"

namespace hpcprof::report::detail {

namespace {

/// The value at fraction `q` of the sorted values (nearest rank).
int64_t quantile(const std::vector<int64_t>& sorted, double q) {
    const size_t i = size_t(std::llround(q * double(sorted.size() - 1)));
    return sorted[std::min(i, sorted.size() - 1)];
}

/// Rows whose key is far from the median: more than 3 scaled median absolute deviations (a
/// robust z-score above 3), and at least 5 % of the median away (ranks that differ by a hair
/// from identical neighbours are not outliers).
std::vector<size_t> outliers(const std::vector<int64_t>& key, int64_t median) {
    std::vector<int64_t> dev;
    for (int64_t k : key) dev.push_back(std::llabs(k - median));
    std::sort(dev.begin(), dev.end());
    const double mad = 1.4826 * double(quantile(dev, 0.5));
    const double floor = std::max(3 * mad, 0.05 * std::fabs(double(median)));
    std::vector<size_t> out;
    for (size_t i = 0; i < key.size(); ++i)
        if (double(std::llabs(key[i] - median)) > floor && floor > 0) out.push_back(i);
    return out;
}

} // namespace

RankRows chooseRankRows(const std::vector<int64_t>& key, const std::string& keyName) {
    RankRows r;
    if (key.size() <= kAllRankRows) {
        for (size_t i = 0; i < key.size(); ++i) r.rows.push_back(i);
        return r;
    }
    std::vector<size_t> order(key.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] > key[b]; });
    std::vector<bool> shown(key.size(), false);
    for (size_t i = 0; i < kEdgeRankRows; ++i) shown[order[i]] = shown[order[order.size() - 1 - i]] = true;
    std::vector<int64_t> sorted(key);
    std::sort(sorted.begin(), sorted.end());
    const int64_t median = quantile(sorted, 0.5);
    size_t outlierRows = 0;
    for (size_t i : outliers(key, median)) {
        if (outlierRows == kMaxOutlierRows) break;
        if (!shown[i]) ++outlierRows;
        shown[i] = true;
    }
    for (size_t i = 0; i < key.size(); ++i)
        if (shown[i]) r.rows.push_back(i);
    r.omitted = key.size() - r.rows.size();
    auto d = [](int64_t ns) { return formatDuration(double(ns)); };
    r.summary = fmt::format("{} of {} rows: the {} largest and smallest {}, and outliers (more than 3 median "
                            "absolute deviations from the median); {} rows left out (--format json has all). "
                            "{} per row: min {}, p25 {}, median {}, p75 {}, max {}",
                            r.rows.size(), key.size(), kEdgeRankRows, keyName, r.omitted, keyName, d(sorted.front()),
                            d(quantile(sorted, 0.25)), d(median), d(quantile(sorted, 0.75)), d(sorted.back()));
    return r;
}

std::string stragglersLeftOut(const analyzer::Analysis& a) {
    const size_t n = a.waits.stragglers.size();
    if (n <= kStragglerRows) return {};
    return fmt::format("{} more ranks made others wait less (--format json lists all)", n - kStragglerRows);
}

std::vector<int64_t> computeKey(const analyzer::Analysis& a) {
    std::vector<int64_t> key;
    for (const auto& r : a.ranks) key.push_back(r.ns(analyzer::TimeClass::Compute));
    return key;
}

} // namespace hpcprof::report::detail
