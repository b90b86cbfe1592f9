// SPDX-License-Identifier: MIT
// Vertical layout of the timeline: one collapsible group per process (ranks first, in rank
// order), with a lane per CPU thread, GPU stream and NIC queue, then its counter lanes. Event lanes
// grow a row per nesting depth as the fetched data reveals deeper events.
#pragma once

#include <QSet>
#include <QString>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/trace_data.hpp"

namespace hpcprof::gui {

struct Lane {
    bool counter = false; ///< counter lane (area chart) rather than event lane
    int64_t id = 0;       ///< track id or counter track id
    QString name;
    int rows = 1;         ///< depth rows (event lanes)
    int y = 0, height = 0;
};

struct LaneGroup {
    int64_t processId = 0;
    std::optional<int64_t> rank;
    QString title;
    bool collapsed = false;
    int y = 0;
    std::vector<Lane> lanes;
};

class LaneLayout {
public:
    static constexpr int kHeaderHeight = 18;
    static constexpr int kRowHeight = 16;
    static constexpr int kCounterHeight = 26;
    static constexpr int kLaneGap = 3;
    static constexpr int kMaxRows = 32;

    /// Lanes of `data`; counter lanes only for the counter names in shownCounters (see
    /// counterLaneShown), the default CPU-use set (defaultCounterNames) when it is not given.
    void build(const TraceData& data, const std::optional<QSet<QString>>& shownCounters = std::nullopt);
    const std::vector<LaneGroup>& groups() const { return m_groups; }
    int totalHeight() const { return m_height; }

    void setCollapsed(size_t group, bool collapsed);
    /// Makes the lane of `trackId` show `rows` depth rows; true if the layout changed.
    bool growRows(int64_t trackId, int rows);

    struct Hit {
        int group = -1, lane = -1, row = -1; ///< lane -1: the group header
    };
    Hit hitTest(int y) const;
    /// Track ids / counter track ids of expanded lanes intersecting [y0, y1).
    std::vector<int64_t> visibleTracks(int y0, int y1) const;
    std::vector<int64_t> visibleCounters(int y0, int y1) const;
    /// Lane of a track, nullptr if none.
    const Lane* laneOfTrack(int64_t trackId) const;
    int groupOfProcess(int64_t processId) const;
    int groupOfRank(int64_t rank) const;

private:
    void relayout();
    std::vector<LaneGroup> m_groups;
    std::unordered_map<int64_t, std::pair<int, int>> m_trackLane; ///< track -> (group, lane)
    int m_height = 0;
};

} // namespace hpcprof::gui
