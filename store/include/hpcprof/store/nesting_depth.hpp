// SPDX-License-Identifier: MIT
// event.depth on one track: fed the track's events in start order, says how many earlier events
// still enclose each one (0 = outermost). Used wherever events are written (raw conversion, GPU,
// RDMA lanes, import).
#pragma once

#include <cstdint>
#include <vector>

namespace hpcprof::store {

class NestingDepth {
public:
    /// Depth of an event [ts, ts + dur) that starts no earlier than the previous one.
    int64_t next(int64_t ts, int64_t dur) {
        while (!m_openEnds.empty() && m_openEnds.back() <= ts) m_openEnds.pop_back();
        int64_t depth = int64_t(m_openEnds.size());
        m_openEnds.push_back(ts + dur);
        return depth;
    }
    /// Starts a new track (keeps the memory).
    void clear() { m_openEnds.clear(); }

private:
    std::vector<int64_t> m_openEnds; // ends of the events enclosing the current one
};

} // namespace hpcprof::store
