// SPDX-License-Identifier: MIT
#include "collective_alignment.hpp"

#include <algorithm>

namespace hpcprof::import {

std::vector<AlignmentOffset> alignByCollectives(const std::vector<RankCollectiveEnds>& ranks,
                                                size_t reference) {
    std::vector<AlignmentOffset> out(ranks.size());
    if (reference >= ranks.size()) return out;
    const auto& ref = ranks[reference].ends;
    out[reference].aligned = true;
    std::vector<int64_t> samples;
    for (size_t r = 0; r < ranks.size(); ++r) {
        if (r == reference) continue;
        samples.clear();
        for (const auto& [key, ends] : ranks[r].ends) {
            auto it = ref.find(key);
            if (it == ref.end()) continue;
            size_t n = std::min(ends.size(), it->second.size());
            for (size_t k = 0; k < n; ++k) samples.push_back(it->second[k] - ends[k]);
        }
        if (samples.empty()) continue;
        std::sort(samples.begin(), samples.end());
        size_t mid = samples.size() / 2;
        // Lower median: an exact sample, so a perfect match reproduces the offset exactly.
        int64_t offset = samples[samples.size() % 2 ? mid : mid - 1];
        int64_t spread = 0;
        for (int64_t s : samples) spread = std::max(spread, s > offset ? s - offset : offset - s);
        out[r] = {true, offset, int64_t(samples.size()), spread};
    }
    return out;
}

} // namespace hpcprof::import
