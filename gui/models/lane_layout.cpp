// SPDX-License-Identifier: MIT
#include "models/lane_layout.hpp"

#include "models/counter_lanes.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace hpcprof::gui {

namespace {

/// The counter lanes of group `g` (see counterLaneShown). A CPU-use counter whose wait counter
/// is shown too on the same thread becomes one lane with the wait stacked above it.
void addCounterLanes(LaneGroup& g, const TraceData& data, const QSet<QString>& shown, bool rankless) {
    std::vector<const CounterTrackInfo*> mine;
    for (const auto& c : data.counters)
        if (c.processId == g.processId && counterLaneShown(c, shown, rankless)) mine.push_back(&c);
    std::vector<bool> stacked(mine.size(), false);
    for (size_t i = 0; i < mine.size(); ++i) {
        const QString above = stackedCounterName(mine[i]->name);
        for (size_t j = 0; !above.isEmpty() && j < mine.size(); ++j)
            if (mine[j]->name == above && mine[j]->mainThread == mine[i]->mainThread && !stacked[j]) {
                stacked[j] = true;
                stacked[i] = true; // i is the base: marked so that it is not stacked itself
                g.lanes.push_back({true, mine[i]->id, mine[j]->id,
                                   QStringLiteral("CPU use + wait (% CPU)")});
                break;
            }
    }
    for (size_t i = 0; i < mine.size(); ++i) {
        if (stacked[i]) continue;
        const CounterTrackInfo& c = *mine[i];
        g.lanes.push_back({true, c.id, -1, c.name + QStringLiteral(" (") + counterUnitLabel(c) + QStringLiteral(")")});
    }
}

/// Whether the group has nothing to draw: not a rank (a rank without a recorded call computed
/// all the time: its summary row says so), no track with an event, no counter lane.
bool emptyGroup(const TraceData& data, const LaneGroup& g) {
    if (g.rank) return false;
    for (const Lane& l : g.lanes) {
        if (l.counter) return false;
        const analyzer::TrackInfo* t = data.track(l.id);
        if (t && t->eventCount > 0) return false;
    }
    return true;
}

/// An image a process exec'ed away from (the launcher's fork of a rank before it became the
/// program: `hpcprof run -- mpirun ... prog` records it) goes under the group of the image that
/// followed with its pid on its host, its lanes named "pre-exec ...", instead of an own
/// "pid N" group between the ranks. Its events stay reachable there.
void foldExecedImages(const TraceData& data, std::vector<LaneGroup>& groups) {
    std::map<std::pair<std::string, int64_t>, const analyzer::ProcessInfo*> later; // (host, pid): last image
    for (const auto& p : data.index.processes())
        if (!p.execed) later[{p.host, p.pid}] = &p;
    std::map<int64_t, size_t> groupOf;
    for (size_t i = 0; i < groups.size(); ++i) groupOf[groups[i].processId] = i;
    std::vector<bool> folded(groups.size(), false);
    for (const auto& p : data.index.processes()) {
        auto to = later.find({p.host, p.pid});
        if (!p.execed || to == later.end() || !groupOf.count(p.id) || !groupOf.count(to->second->id)) continue;
        const size_t from = groupOf[p.id];
        LaneGroup& target = groups[groupOf[to->second->id]];
        for (Lane l : groups[from].lanes) {
            l.name = QStringLiteral("pre-exec ") + l.name;
            target.lanes.push_back(std::move(l));
        }
        folded[from] = true;
    }
    std::vector<LaneGroup> kept;
    for (size_t i = 0; i < groups.size(); ++i)
        if (!folded[i]) kept.push_back(std::move(groups[i]));
    groups = std::move(kept);
}

/// Leaves out the rank-less processes with nothing recorded: the image of a rank before it exec'ed the
/// program, the launcher (mpirun, a shell) that only started it. They were empty "pid" headers
/// between the ranks. A process with anything (an event, a counter) stays; when every process
/// is empty they all stay, so that the screen says what the trace holds.
void dropEmptyGroups(const TraceData& data, std::vector<LaneGroup>& groups) {
    std::vector<LaneGroup> kept;
    for (auto& g : groups)
        if (!emptyGroup(data, g)) kept.push_back(std::move(g));
    if (!kept.empty()) groups = std::move(kept);
}

} // namespace

void LaneLayout::build(const TraceData& data, const std::optional<QSet<QString>>& shownCounters) {
    const QSet<QString> shown = shownCounters ? *shownCounters : defaultCounterNames(data.counters);
    m_groups.clear();
    m_trackLane.clear();
    std::vector<const analyzer::ProcessInfo*> procs;
    bool hasRanks = false;
    for (const auto& p : data.index.processes()) procs.push_back(&p), hasRanks |= p.rank.has_value();
    std::stable_sort(procs.begin(), procs.end(), [](auto* a, auto* b) {
        if (a->rank.has_value() != b->rank.has_value()) return a->rank.has_value();
        if (a->rank && *a->rank != *b->rank) return *a->rank < *b->rank;
        return a->pid < b->pid;
    });
    for (const auto* p : procs) {
        LaneGroup g;
        g.processId = p->id;
        g.rank = p->rank;
        g.title = p->rank ? QStringLiteral("Rank %1  (pid %2, %3)").arg(*p->rank).arg(p->pid).arg(QString::fromStdString(p->host))
                          : QStringLiteral("pid %1  (%2)").arg(p->pid).arg(QString::fromStdString(p->host));
        auto tracks = data.index.tracksOf(p->id);
        std::stable_sort(tracks.begin(), tracks.end(), [](auto* a, auto* b) {
            if (a->kind != b->kind) return int(a->kind) < int(b->kind);
            if (a->device != b->device) return a->device < b->device;
            if (a->stream != b->stream) return a->stream < b->stream;
            return a->id < b->id;
        });
        for (const auto* t : tracks) {
            Lane l;
            l.id = t->id;
            l.name = QString::fromStdString(t->name);
            if (t->kind == analyzer::TrackKind::CpuThread && t->tid)
                l.name = QStringLiteral("thread %1").arg(*t->tid);
            g.lanes.push_back(l);
        }
        addCounterLanes(g, data, shown, hasRanks && !p->rank);
        m_groups.push_back(std::move(g));
    }
    foldExecedImages(data, m_groups);
    dropEmptyGroups(data, m_groups);
    m_byRank = m_groups;
    relayout();
}

void LaneLayout::relayout() {
    m_trackLane.clear();
    for (size_t gi = 0; gi < m_groups.size(); ++gi)
        for (size_t li = 0; li < m_groups[gi].lanes.size(); ++li)
            if (!m_groups[gi].lanes[li].counter) m_trackLane[m_groups[gi].lanes[li].id] = {int(gi), int(li)};
    int y = 0, inRow = 0; // inRow: folded groups already on the current shared row
    for (auto& g : m_groups) {
        if (bundled(g)) {
            g.y = y;
            if (++inRow == m_ranksPerRow) y += m_headerHeight, inRow = 0;
        } else {
            if (inRow > 0 && !g.hidden) y += m_headerHeight, inRow = 0; // an unfolded group ends a shared row
            g.y = y;
            if (!g.hidden) y += m_headerHeight;
        }
        for (auto& l : g.lanes) {
            l.y = y;
            l.height = g.collapsed || g.hidden ? 0 : (l.counter ? kCounterHeight : l.rows * kRowHeight) + kLaneGap;
            y += l.height;
        }
    }
    if (inRow > 0) y += m_headerHeight;
    m_height = y;
}

void LaneLayout::fitTo(int height) {
    for (auto& g : m_groups) g.collapsed = false;
    m_headerHeight = kHeaderHeight;
    m_ranksPerRow = 1;
    relayout();
    int shown = 0;
    for (const auto& g : m_groups) shown += g.hidden ? 0 : 1;
    if (m_height <= height || shown == 0) return;
    for (auto& g : m_groups) g.collapsed = true;
    if (shown > height && height > 0) { // more ranks than pixel rows: rows hold several ranks
        m_headerHeight = kMinHeaderHeight;
        m_ranksPerRow = (shown + height - 1) / height;
        relayout();
        return;
    }
    m_headerHeight = std::clamp(height / shown, kMinHeaderHeight, int(kHeaderHeight));
    relayout();
    // Room left: unfold the first groups, in order, as long as every rank still fits.
    bool unfolded = false;
    for (auto& g : m_groups) {
        if (g.hidden) continue;
        g.collapsed = false;
        relayout();
        if (m_height <= height) {
            unfolded = true;
            continue;
        }
        g.collapsed = true;
        relayout();
        break;
    }
    // None unfolds (a few ranks with tall lanes): taller summary rows use the room instead.
    if (!unfolded) {
        m_headerHeight = std::clamp(height / shown, kMinHeaderHeight, kMaxSummaryHeight);
        relayout();
    }
}

void LaneLayout::orderRanks(const std::vector<int64_t>& ranks, bool hideOthers) {
    std::unordered_map<int64_t, LaneGroup> current; // by process id: what the user changed
    for (auto& g : m_groups) current[g.processId] = std::move(g);
    m_groups.clear();
    std::vector<bool> used(m_byRank.size(), false);
    for (int64_t r : ranks)
        for (size_t i = 0; i < m_byRank.size(); ++i) {
            if (used[i] || m_byRank[i].rank != r) continue;
            used[i] = true;
            m_groups.push_back(std::move(current[m_byRank[i].processId]));
            m_groups.back().hidden = false;
        }
    for (size_t i = 0; i < m_byRank.size(); ++i) {
        if (used[i]) continue;
        m_groups.push_back(std::move(current[m_byRank[i].processId]));
        m_groups.back().hidden = hideOthers;
    }
    relayout();
}

void LaneLayout::setCollapsed(size_t group, bool collapsed) {
    if (group >= m_groups.size()) return;
    m_groups[group].collapsed = collapsed;
    relayout();
}

bool LaneLayout::growRows(int64_t trackId, int rows) {
    auto it = m_trackLane.find(trackId);
    if (it == m_trackLane.end()) return false;
    Lane& l = m_groups[size_t(it->second.first)].lanes[size_t(it->second.second)];
    rows = std::min(rows, kMaxRows);
    if (rows <= l.rows) return false;
    l.rows = rows;
    relayout();
    return true;
}

std::vector<int> LaneLayout::rowMembers(int group) const {
    if (group < 0 || size_t(group) >= m_groups.size()) return {};
    if (!bundled(m_groups[size_t(group)])) return {group};
    std::vector<int> out;
    for (size_t i = 0; i < m_groups.size(); ++i)
        if (bundled(m_groups[i]) && m_groups[i].y == m_groups[size_t(group)].y) out.push_back(int(i));
    return out;
}

LaneLayout::Hit LaneLayout::hitTest(int y) const {
    Hit h;
    for (size_t gi = 0; gi < m_groups.size(); ++gi) {
        const auto& g = m_groups[gi];
        if (y < g.y) break;
        if (g.hidden) continue;
        if (y < g.y + m_headerHeight) return {int(gi), -1, -1};
        for (size_t li = 0; li < g.lanes.size(); ++li) {
            const auto& l = g.lanes[li];
            if (l.height > 0 && y >= l.y && y < l.y + l.height) {
                int row = l.counter ? 0 : (y - l.y) / kRowHeight;
                return {int(gi), int(li), row < l.rows ? row : -1};
            }
        }
    }
    return h;
}

std::vector<int64_t> LaneLayout::visibleTracks(int y0, int y1) const {
    std::vector<int64_t> out;
    for (const auto& g : m_groups)
        for (const auto& l : g.lanes)
            if (!l.counter && l.height > 0 && l.y < y1 && l.y + l.height > y0) out.push_back(l.id);
    return out;
}

std::vector<int64_t> LaneLayout::visibleCounters(int y0, int y1) const {
    std::vector<int64_t> out;
    for (const auto& g : m_groups)
        for (const auto& l : g.lanes)
            if (l.counter && l.height > 0 && l.y < y1 && l.y + l.height > y0) {
                out.push_back(l.id);
                if (l.stackId >= 0) out.push_back(l.stackId);
            }
    return out;
}

std::vector<int64_t> LaneLayout::visibleGroups(int y0, int y1) const {
    std::vector<int64_t> out;
    for (const auto& g : m_groups)
        if (!g.hidden && g.y < y1 && g.y + m_headerHeight > y0) out.push_back(g.processId);
    return out;
}

const Lane* LaneLayout::laneOfTrack(int64_t trackId) const {
    auto it = m_trackLane.find(trackId);
    if (it == m_trackLane.end()) return nullptr;
    return &m_groups[size_t(it->second.first)].lanes[size_t(it->second.second)];
}

int LaneLayout::groupOfProcess(int64_t processId) const {
    for (size_t i = 0; i < m_groups.size(); ++i)
        if (m_groups[i].processId == processId) return int(i);
    return -1;
}

int LaneLayout::groupOfRank(int64_t rank) const {
    for (size_t i = 0; i < m_groups.size(); ++i)
        if (m_groups[i].rank == rank) return int(i);
    return -1;
}

} // namespace hpcprof::gui
