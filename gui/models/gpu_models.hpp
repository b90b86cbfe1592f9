// SPDX-License-Identifier: MIT
// Table models over the gpu family's results and the steps (never computed here): kernel
// statistics per name (one rank or all ranks), GPU idle time by cause per rank and its longest
// gaps, and every rank's steps with their breakdown and straggler. Each is empty, with
// emptyText() saying why, when the trace has none of it (a trace without GPU kernels).
#pragma once

#include <QColor>
#include <vector>

#include "models/analysis_models.hpp"

namespace hpcprof::gui {

/// Start and end (ns, trace time) of a row's interval, for zooming the timeline to it.
inline constexpr int BeginRole = Qt::UserRole + 2;
inline constexpr int EndRole = Qt::UserRole + 3;
/// GPU idle model: the causes' shares of the rank's idle time (QVariantList of doubles, in cause
/// order) for the stacked bar.
inline constexpr int CauseSharesRole = Qt::UserRole + 4;

/// Colour of GPU idle cause `cause` (GpuIdleCause order: kernel_wait, input, communication, sync,
/// memcpy, launch, host); docs/gui.md lists them.
QColor gpuIdleCauseColor(int cause);
/// Name of GPU idle cause `cause` as in reports ("kernel_wait").
QString gpuIdleCauseLabel(int cause);
inline constexpr int kGpuIdleCauses = 7;

/// Kernel statistics by name. Rank -1 (the default) sums every rank: counts and totals add, min
/// and max are over all ranks, std is the pooled sample standard deviation, launch latency the
/// count-weighted mean and the largest.
class KernelStatsModel : public AnalysisTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, ClassColumn, CountColumn, TotalColumn, MeanColumn, MinColumn, MaxColumn,
                  StdColumn, LaunchMeanColumn, LaunchMaxColumn, ColumnCount };
    explicit KernelStatsModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    /// Keeps the rank shown when the new analysis has it, else shows all ranks.
    void setAnalysis(AnalysisPtr a);
    void setRank(int64_t rank);
    int64_t rank() const { return m_rank; }
    /// The ranks with GPU kernels, by rank.
    std::vector<int64_t> ranks() const;
    /// Why the table is empty ("" when it is not).
    QString emptyText() const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    struct Row {
        QString name, shortName, cls;
        int64_t count = 0, totalNs = 0, minNs = 0, maxNs = 0;
        double meanNs = 0, stdNs = 0;
        int64_t launchCount = 0, launchMaxNs = 0, launchMedianNs = -1, launchP95Ns = -1;
        double launchMeanNs = 0;
    };

private:
    void rebuild();
    QVariant raw(const Row& r, int column) const;
    int64_t m_rank = -1;
    std::vector<Row> m_rows;
};

/// GPU idle time per GPU rank: total, share of the rank's window, and each cause.
class GpuIdleModel : public AnalysisTableModel {
    Q_OBJECT
public:
    enum Column { RankColumn, IdleColumn, SplitColumn, FirstCauseColumn, ColumnCount = FirstCauseColumn + kGpuIdleCauses };
    explicit GpuIdleModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    QString emptyText() const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
};

/// The longest GPU idle gaps of every GPU rank (BeginRole/EndRole give the gap).
class GpuGapsModel : public AnalysisTableModel {
    Q_OBJECT
public:
    enum Column { RankColumn, StartColumn, DurationColumn, CauseColumn, ColumnCount };
    explicit GpuGapsModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    void setAnalysis(AnalysisPtr a);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    struct Gap { int64_t rank, begin, end; int cause; };
    std::vector<Gap> m_gaps;
};

/// Every rank's steps: duration, the exclusive breakdown inside the step, GPU idle, where its
/// last communication kernel starts and whether it was the step's straggler.
class StepsModel : public AnalysisTableModel {
    Q_OBJECT
public:
    enum Column { StepColumn, RankColumn, StartColumn, DurationColumn, ComputeColumn, CommColumn, MemoryColumn,
                  SyncColumn, IoColumn, IdleColumn, GpuIdleColumn, CommStartColumn, StragglerColumn, ColumnCount };
    explicit StepsModel(QObject* parent = nullptr) : AnalysisTableModel(parent) {}
    void setAnalysis(AnalysisPtr a);
    /// What the steps are and their statistics, or why there are none.
    QString summaryText() const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    QVariant raw(int row, int column) const;
    static QVariant display(const QVariant& raw, int column, bool hasBreakdown);
    std::vector<std::pair<size_t, size_t>> m_rows; ///< (index in steps.ranks, step i)
};

} // namespace hpcprof::gui
