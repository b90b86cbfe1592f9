// SPDX-License-Identifier: MIT
// Search by name (substring or regex), class and rank range, on a worker thread: matching names
// are found in the string table first, then only the selected ranks' tracks are scanned.
#pragma once

#include <cstdint>
#include <vector>

#include "models/trace_data.hpp"
#include "models/zoom_stack.hpp"

namespace hpcprof::gui {

struct SearchMatch {
    int64_t eventId = 0, trackId = 0, ts = 0, dur = 0;
};

struct SearchResult {
    std::vector<SearchMatch> matches; ///< by ts
    int64_t total = 0;                ///< all matches (matches holds at most the limit)
    bool truncated() const { return total > int64_t(matches.size()); }
};

/// Runs `filter` over the trace (worker thread). An invalid regex is an error.
Result<SearchResult> searchEvents(const TraceData& data, const Filter& filter, size_t limit = 100000);

} // namespace hpcprof::gui
