// SPDX-License-Identifier: MIT
// Vertical layout of the timeline: one collapsible group per process (ranks first, in rank
// order), with a lane per CPU thread, GPU stream and NIC queue, then its counter lanes. Event lanes
// grow a row per nesting depth as the fetched data reveals deeper events. A group's header row is
// its rank's summary row (the class mix over time); fitTo() makes the first screen show every
// rank: all groups expanded when they fit, else all folded to their summary rows, which shrink
// (down to kMinHeaderHeight) so that every rank fits; with more ranks than pixel rows, one pixel
// row holds several consecutive folded ranks (ranksPerRow), which the painter blends.
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
    int64_t stackId = -1; ///< counter lane: a second counter stacked above it (a CPU-use lane's wait)
    QString name;
    int rows = 1;         ///< depth rows (event lanes)
    int y = 0, height = 0;
};

struct LaneGroup {
    int64_t processId = 0;
    std::optional<int64_t> rank;
    QString title;
    bool collapsed = false;
    bool hidden = false; ///< filtered out: takes no space
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
    static constexpr int kMinHeaderHeight = 1;
    static constexpr int kMaxSummaryHeight = 48; ///< summary rows of a few folded ranks

    /// Fits the groups into a viewport of `height` pixels (see the file comment); the order
    /// of the groups is kept.
    void fitTo(int height);
    /// Orders the rank groups as `ranks` lists them; the other groups follow in build order, or
    /// are hidden with `hideOthers` (a filter). Folding and grown rows are kept.
    void orderRanks(const std::vector<int64_t>& ranks, bool hideOthers);
    /// Height of a group's header (summary) row.
    int headerHeight() const { return m_headerHeight; }
    /// Folded groups that share one header row (1 unless there are more ranks than pixel rows).
    int ranksPerRow() const { return m_ranksPerRow; }
    /// The groups whose header row is the one of `group` (itself alone when rows are not shared),
    /// in order.
    std::vector<int> rowMembers(int group) const;

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
    /// Process ids of the groups whose header (summary) row intersects [y0, y1).
    std::vector<int64_t> visibleGroups(int y0, int y1) const;
    /// Lane of a track, nullptr if none.
    const Lane* laneOfTrack(int64_t trackId) const;
    int groupOfProcess(int64_t processId) const;
    int groupOfRank(int64_t rank) const;

private:
    void relayout();
    /// True when group `g` shares its header row with other folded groups.
    bool bundled(const LaneGroup& g) const { return m_ranksPerRow > 1 && g.collapsed && !g.hidden; }
    std::vector<LaneGroup> m_groups;
    std::unordered_map<int64_t, std::pair<int, int>> m_trackLane; ///< track -> (group, lane)
    int m_height = 0;
    int m_headerHeight = kHeaderHeight;
    int m_ranksPerRow = 1;
    std::vector<LaneGroup> m_byRank; ///< the groups as built (setGroupOrder picks from them)
};

} // namespace hpcprof::gui
