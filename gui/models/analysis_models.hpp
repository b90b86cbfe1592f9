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

class BreakdownModel : public QAbstractTableModel {
    Q_OBJECT
public:
    /// Rank, window, the six exclusive classes, wait, events.
    enum Column { RankColumn, WindowColumn, FirstClassColumn, WaitColumn = FirstClassColumn + 6, EventsColumn, ColumnCount };
    explicit BreakdownModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setAnalysis(AnalysisPtr a);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    AnalysisPtr m_a;
};

class PopModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit PopModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setAnalysis(AnalysisPtr a);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    AnalysisPtr m_a;
};

class TopItemsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Kind { Kernels, Collectives, Files };
    enum Column { NameColumn, CountColumn, TotalColumn, MaxColumn, BytesColumn, ColumnCount };
    explicit TopItemsModel(Kind kind, QObject* parent = nullptr) : QAbstractTableModel(parent), m_kind(kind) {}
    void setAnalysis(AnalysisPtr a);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    const std::vector<analyzer::TopItem>* items() const;
    Kind m_kind;
    AnalysisPtr m_a;
};

/// Data-quality warnings of the analysis (trace stats and analysis problems).
class WarningsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit WarningsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setAnalysis(AnalysisPtr a);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    AnalysisPtr m_a;
};

} // namespace hpcprof::gui
