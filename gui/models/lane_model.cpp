// SPDX-License-Identifier: MIT
#include "models/lane_model.hpp"

namespace hpcprof::gui {

namespace {
// Internal ids: 0 for group rows, group index + 1 for lane rows (their parent's row).
constexpr quintptr kGroupId = 0;

// ---- group rows ----------------------------------------------------------------------

QVariant groupDisplay(const TraceData& data, const LaneGroup& g, int column) {
    if (column == LaneModel::NameColumn) return g.title;
    if (column == LaneModel::KindColumn)
        return g.rank ? QStringLiteral("rank") : QStringLiteral("process");
    if (column == LaneModel::EventsColumn) {
        qint64 n = 0;
        for (const auto* t : data.index.tracksOf(g.processId)) n += t->eventCount;
        return n;
    }
    return {};
}

QVariant groupData(const TraceData& data, const LaneGroup& g, int column, int role) {
    switch (role) {
    case Qt::DisplayRole: return groupDisplay(data, g, column);
    case LaneModel::ProcessIdRole: return qint64(g.processId);
    case LaneModel::RankRole: return g.rank ? QVariant(qint64(*g.rank)) : QVariant();
    default: return {};
    }
}

// ---- lane rows -----------------------------------------------------------------------

/// The kind column of a lane: counter, or its track's kind (nothing for an unknown track).
QVariant laneKind(const Lane& l, const analyzer::TrackInfo* t) {
    if (l.counter) return QStringLiteral("counter");
    if (!t) return {};
    return t->kind == analyzer::TrackKind::GpuStream ? QStringLiteral("gpu_stream")
           : t->kind == analyzer::TrackKind::NicQueue ? QStringLiteral("nic_queue")
                                                      : QStringLiteral("cpu_thread");
}

QVariant laneDisplay(const Lane& l, const analyzer::TrackInfo* t, int column) {
    if (column == LaneModel::NameColumn) return l.name;
    if (column == LaneModel::KindColumn) return laneKind(l, t);
    if (column == LaneModel::EventsColumn) return t ? QVariant(qint64(t->eventCount)) : QVariant();
    return {};
}

/// `t` is the lane's track (null for counter lanes and unknown tracks).
QVariant laneData(const LaneGroup& g, const Lane& l, const analyzer::TrackInfo* t, int column,
                  int role) {
    switch (role) {
    case Qt::DisplayRole: return laneDisplay(l, t, column);
    case LaneModel::ProcessIdRole: return qint64(g.processId);
    case LaneModel::RankRole: return g.rank ? QVariant(qint64(*g.rank)) : QVariant();
    case LaneModel::TrackIdRole: return qint64(l.id);
    case LaneModel::IsCounterRole: return l.counter;
    case LaneModel::EventCountRole: return t ? qint64(t->eventCount) : qint64(0);
    default: return {};
    }
}

} // namespace

void LaneModel::setTrace(TraceDataPtr data, const LaneLayout& layout) {
    beginResetModel();
    m_data = std::move(data);
    m_groups = layout.groups();
    endResetModel();
}

QModelIndex LaneModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, kGroupId);
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex LaneModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == kGroupId) return {};
    return createIndex(int(child.internalId() - 1), 0, kGroupId);
}

int LaneModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return int(m_groups.size());
    if (parent.internalId() != kGroupId || parent.column() != 0) return 0;
    return int(m_groups[size_t(parent.row())].lanes.size());
}

int LaneModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant LaneModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_data) return {};
    if (index.internalId() == kGroupId)
        return groupData(*m_data, m_groups[size_t(index.row())], index.column(), role);
    const LaneGroup& g = m_groups[size_t(index.internalId() - 1)];
    const Lane& l = g.lanes[size_t(index.row())];
    const analyzer::TrackInfo* t = l.counter ? nullptr : m_data->track(l.id);
    return laneData(g, l, t, index.column(), role);
}

QVariant LaneModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn: return QStringLiteral("Lane");
    case KindColumn: return QStringLiteral("Kind");
    case EventsColumn: return QStringLiteral("Events");
    default: return {};
    }
}

} // namespace hpcprof::gui
