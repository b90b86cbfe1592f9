// SPDX-License-Identifier: MIT
#include "models/analysis_models.hpp"

#include <QBrush>

#include "models/class_colors.hpp"
#include "models/format.hpp"
#include "models/severity_colors.hpp"

namespace hpcprof::gui {

namespace {
QString pct(double v) { return QString::number(100.0 * v, 'f', 1) + QStringLiteral(" %"); }
} // namespace

// ---- breakdown ----
int BreakdownModel::rowCount(const QModelIndex& p) const { return p.isValid() || !m_a ? 0 : int(m_a->ranks.size()); }
int BreakdownModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QVariant BreakdownModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_a) return {};
    const auto& r = m_a->ranks[size_t(index.row())];
    const int c = index.column();
    if (role == RankRole) return qint64(r.rank);
    auto raw = [&]() -> qint64 {
        if (c == RankColumn) return r.rank;
        if (c == WindowColumn) return r.windowNs;
        if (c >= FirstClassColumn && c < WaitColumn) return r.exclusive[c - FirstClassColumn];
        if (c == WaitColumn) return r.waitNs;
        return r.events;
    };
    if (role == SortRole) return raw();
    if (role == Qt::DisplayRole) {
        if (c == RankColumn) return QString::number(r.rank) + (r.gpu ? QStringLiteral(" (GPU)") : QString());
        if (c == EventsColumn) return qint64(r.events);
        if (c >= FirstClassColumn && c < WaitColumn && r.windowNs > 0)
            return formatDuration(raw()) + QStringLiteral("  ") + pct(double(raw()) / double(r.windowNs));
        return formatDuration(raw());
    }
    if (role == Qt::TextAlignmentRole && c != RankColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::DecorationRole && c >= FirstClassColumn && c < WaitColumn)
        return timeClassColor(analyzer::TimeClass(c - FirstClassColumn));
    return {};
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == RankColumn) return QStringLiteral("Rank");
    if (section == WindowColumn) return QStringLiteral("Window");
    if (section >= FirstClassColumn && section < WaitColumn)
        return QString::fromLatin1(analyzer::timeClassName(analyzer::TimeClass(section - FirstClassColumn)));
    if (section == WaitColumn) return QStringLiteral("Wait");
    if (section == EventsColumn) return QStringLiteral("Events");
    return {};
}

// ---- POP ----
namespace {
struct PopRow { const char* name; double analyzer::PopMetrics::*field; };
const PopRow kPopRows[] = {
    {"Parallel efficiency", &analyzer::PopMetrics::parallelEfficiency},
    {"Load balance", &analyzer::PopMetrics::loadBalance},
    {"Communication efficiency", &analyzer::PopMetrics::communicationEfficiency},
    {"Serialisation efficiency", &analyzer::PopMetrics::serialisationEfficiency},
    {"Transfer efficiency", &analyzer::PopMetrics::transferEfficiency},
};
constexpr int kPopRatioRows = 5;
} // namespace

int PopModel::rowCount(const QModelIndex& p) const { return p.isValid() || !m_a ? 0 : kPopRatioRows + 2; }
int PopModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : 2; }

QVariant PopModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_a) return {};
    const int r = index.row();
    if (role != Qt::DisplayRole && role != SortRole) return {};
    if (index.column() == 0) {
        if (r < kPopRatioRows) return QString::fromLatin1(kPopRows[r].name);
        return r == kPopRatioRows ? QStringLiteral("Runtime") : QStringLiteral("Ideal runtime");
    }
    if (r < kPopRatioRows) {
        double v = m_a->pop.*kPopRows[r].field;
        return role == SortRole ? QVariant(v) : QVariant(pct(v));
    }
    qint64 ns = r == kPopRatioRows ? m_a->pop.runtimeNs : m_a->pop.idealRuntimeNs;
    return role == SortRole ? QVariant(ns) : QVariant(formatDuration(ns));
}

QVariant PopModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    return section == 0 ? QStringLiteral("Metric") : QStringLiteral("Value");
}

// ---- top items ----
const std::vector<analyzer::TopItem>* TopItemsModel::items() const {
    if (!m_a) return nullptr;
    switch (m_kind) {
    case Kind::Kernels: return &m_a->topKernels;
    case Kind::Collectives: return &m_a->topCollectives;
    case Kind::Files: return &m_a->topFiles;
    }
    return nullptr;
}
int TopItemsModel::rowCount(const QModelIndex& p) const { return p.isValid() || !items() ? 0 : int(items()->size()); }
int TopItemsModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QVariant TopItemsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !items()) return {};
    const auto& it = (*items())[size_t(index.row())];
    const int c = index.column();
    if (role == SortRole) {
        switch (c) {
        case NameColumn: return QString::fromStdString(it.name);
        case CountColumn: return qint64(it.count);
        case TotalColumn: return qint64(it.totalNs);
        case MaxColumn: return qint64(it.maxNs);
        default: return qint64(it.bytes);
        }
    }
    if (role == Qt::DisplayRole) {
        switch (c) {
        case NameColumn: return QString::fromStdString(it.name);
        case CountColumn: return qint64(it.count);
        case TotalColumn: return formatDuration(it.totalNs);
        case MaxColumn: return formatDuration(it.maxNs);
        default: return it.bytes > 0 ? formatBytes(it.bytes) : QString();
        }
    }
    if (role == Qt::ToolTipRole && c == NameColumn) return QString::fromStdString(it.name);
    if (role == Qt::TextAlignmentRole && c != NameColumn) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant TopItemsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"Name", "Count", "Total", "Max", "Bytes"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

// ---- warnings ----
int WarningsModel::rowCount(const QModelIndex& p) const { return p.isValid() || !m_a ? 0 : int(m_a->warnings.size()); }
int WarningsModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : 3; }

QVariant WarningsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_a) return {};
    const auto& w = m_a->warnings[size_t(index.row())];
    if (role == Qt::ForegroundRole) return severityColor(warningSeverity(w));
    if (role != Qt::DisplayRole && role != SortRole) return {};
    switch (index.column()) {
    case 0: return QString::fromStdString(w.name);
    case 1: return qint64(w.count);
    default: return QString::fromStdString(w.message);
    }
}

QVariant WarningsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"Problem", "Count", "Meaning"};
    return section >= 0 && section < 3 ? QString::fromLatin1(kNames[section]) : QVariant();
}

} // namespace hpcprof::gui
