// SPDX-License-Identifier: MIT
// Sorting and filtering the timeline's ranks by their breakdown: the Breakdown table's sort
// order is the timeline's rank order, and a filter such as `comm>30` (a class of the breakdown,
// < or >, a percentage of the rank's window) keeps the ranks that pass, in the table and on the
// timeline.
#pragma once

#include <QSortFilterProxyModel>
#include <QString>
#include <optional>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::gui {

struct RankFilter {
    analyzer::TimeClass cls = analyzer::TimeClass::Compute;
    bool greater = true; ///< > (else <)
    double pct = 0;      ///< of the rank's window
};

/// Parses `CLASS>PCT` or `CLASS<PCT` (CLASS as in the reports: compute, comm, io, memory, sync,
/// idle, setup; spaces and a trailing % allowed). Empty text: no filter (nullopt, ok). A text
/// that is not a filter: nullopt and `*ok` false.
std::optional<RankFilter> parseRankFilter(const QString& text, bool* ok);

/// The BreakdownModel behind a filter: rows of ranks that fail it are hidden.
class RankFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RankFilterProxy(QObject* parent = nullptr) : QSortFilterProxyModel(parent) {}
    void setRankFilter(std::optional<RankFilter> f);
    bool filtering() const { return m_filter.has_value(); }
    /// The ranks of the visible rows, top to bottom.
    std::vector<int64_t> rankOrder() const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    std::optional<RankFilter> m_filter;
};

} // namespace hpcprof::gui
