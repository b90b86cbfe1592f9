// SPDX-License-Identifier: MIT
// Table models over the analyzer's results (never computed here): per-rank breakdown, POP
// metrics, top kernels/collectives/files and data-quality warnings. Display text is formatted;
// SortRole carries the raw number so a QSortFilterProxyModel sorts numerically.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::gui {

using AnalysisPtr = std::shared_ptr<const analyzer::Analysis>;

/// Raw value of a cell (qint64 ns, double, or the display string).
inline constexpr int SortRole = Qt::UserRole;
/// Rank number of a row (breakdown) for jumping to the rank.
inline constexpr int RankRole = Qt::UserRole + 1;

/// What the analysis tables share: they show one Analysis and reset when it is replaced.
class AnalysisTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit AnalysisTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setAnalysis(AnalysisPtr a) {
        beginResetModel();
        m_a = std::move(a);
        endResetModel();
    }

protected:
    AnalysisPtr m_a;
};

class BreakdownModel : public AnalysisTableModel {
    Q_OBJECT
public:
    /// Rank, window, the six exclusive classes, wait, events.
    enum Column { RankColumn, WindowColumn, FirstClassColumn, WaitColumn = FirstClassColumn + analyzer::kTimeClassCount, EventsColumn, ColumnCount };
    explicit BreakdownModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
};

class PopModel : public AnalysisTableModel {
    Q_OBJECT
public:
    explicit PopModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
};

class TopItemsModel : public AnalysisTableModel {
    Q_OBJECT
public:
    enum class Kind { Kernels, Collectives, Files };
    enum Column { NameColumn, CountColumn, TotalColumn, MaxColumn, BytesColumn, ColumnCount };
    explicit TopItemsModel(Kind kind, QObject* parent = nullptr) : AnalysisTableModel(parent), m_kind(kind) {}
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    const std::vector<analyzer::TopItem>* items() const;
    Kind m_kind;
};

/// Data-quality warnings of the analysis (trace stats and analysis problems).
class WarningsModel : public AnalysisTableModel {
    Q_OBJECT
public:
    explicit WarningsModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
};

} // namespace hpcprof::gui
