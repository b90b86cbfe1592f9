// SPDX-License-Identifier: MIT
// The Breakdown tab's rank table with its filter field: sorting the table by any column (rank,
// compute, comm, ...) orders the timeline's ranks the same way; a filter (`comm>30`) keeps only
// the ranks that pass, on both.
#pragma once

#include <QWidget>
#include <cstdint>
#include <vector>

namespace hpcprof::gui {

class BreakdownModel;
class RankFilterProxy;

class RankTable : public QWidget {
    Q_OBJECT
public:
    RankTable(BreakdownModel* model, QWidget* parent);

signals:
    /// The table's ranks, top to bottom; `filtered`: ranks not listed fail the filter.
    void ranksOrdered(std::vector<int64_t> ranks, bool filtered);

private:
    RankFilterProxy* m_proxy;
};

} // namespace hpcprof::gui
