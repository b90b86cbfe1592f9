// SPDX-License-Identifier: MIT
// The lanes as a tree model: a row per process group (ranks first), a child per lane. Used by the
// lanes dock (collapse/expand) and tested with QAbstractItemModelTester.
#pragma once

#include <QAbstractItemModel>

#include "models/lane_layout.hpp"

namespace hpcprof::gui {

class LaneModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Role { ProcessIdRole = Qt::UserRole + 1, RankRole, TrackIdRole, IsCounterRole, EventCountRole };
    enum Column { NameColumn, KindColumn, EventsColumn, ColumnCount };

    explicit LaneModel(QObject* parent = nullptr) : QAbstractItemModel(parent) {}
    void setTrace(TraceDataPtr data, const LaneLayout& layout);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    TraceDataPtr m_data;
    std::vector<LaneGroup> m_groups;
};

} // namespace hpcprof::gui
