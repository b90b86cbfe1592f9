// SPDX-License-Identifier: MIT
#include "models/findings_model.hpp"

#include <QColor>

#include "models/format.hpp"
#include "models/severity_colors.hpp"

namespace hpcprof::gui {

void FindingsModel::setAnalysis(AnalysisPtr a) {
    beginResetModel();
    m_a = std::move(a);
    endResetModel();
}

const analyzer::Finding* FindingsModel::finding(int row) const {
    if (!m_a || row < 0 || size_t(row) >= m_a->findings.size()) return nullptr;
    return &m_a->findings[size_t(row)];
}

int FindingsModel::rowCount(const QModelIndex& p) const { return p.isValid() || !m_a ? 0 : int(m_a->findings.size()); }
int FindingsModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QString FindingsModel::evidenceText(const analyzer::Finding& f) {
    QStringList lines;
    for (const auto& e : f.evidence) {
        QString v;
        if (e.unit == "ns")
            v = formatDuration(int64_t(e.value));
        else if (e.unit == "bytes")
            v = formatBytes(int64_t(e.value));
        else if (e.unit == "pct")
            v = QString::number(e.value, 'f', 1) + QStringLiteral(" %");
        else
            v = QString::number(e.value, 'g', 4) + (e.unit == "count" || e.unit.empty() ? QString() : QStringLiteral(" ") + QString::fromStdString(e.unit));
        lines << QString::fromStdString(e.key) + QStringLiteral(" = ") + v;
    }
    return lines.join(QLatin1Char('\n'));
}

namespace {

// ---- one role of a finding, per column ------------------------------------------------

/// The first 8 ranks, then their count.
QString ranksText(const analyzer::Finding& f) {
    QStringList r;
    for (size_t i = 0; i < f.ranks.size() && i < 8; ++i) r << QString::number(f.ranks[i]);
    if (f.ranks.size() > 8) r << QStringLiteral("... (%1)").arg(f.ranks.size());
    return r.join(QStringLiteral(", "));
}

QVariant displayData(const analyzer::Finding& f, int column) {
    switch (column) {
    case FindingsModel::SeverityColumn: return QString::fromLatin1(analyzer::severityName(f.severity));
    case FindingsModel::TitleColumn: return QString::fromStdString(f.title);
    case FindingsModel::RanksColumn: return ranksText(f);
    // The exclusive gain adds up over the findings; the estimate is the change's alone.
    default:
        return QStringLiteral("%1 (alone %2)")
            .arg(formatDuration(f.exclusiveGainNs), formatDuration(f.estimatedGainNs));
    }
}

/// The raw values behind the display, so that the proxy sorts numerically.
QVariant sortData(const analyzer::Finding& f, int column) {
    switch (column) {
    case FindingsModel::SeverityColumn: return int(f.severity);
    case FindingsModel::TitleColumn: return QString::fromStdString(f.title);
    case FindingsModel::RanksColumn: return qint64(f.ranks.size());
    default: return qint64(f.exclusiveGainNs);
    }
}

/// The severity column's text colour (severityColor: the same everywhere in the GUI).
QVariant foregroundData(const analyzer::Finding& f, int column) {
    if (column == FindingsModel::SeverityColumn) return severityColor(f.severity);
    return {};
}

QVariantList idList(const std::vector<int64_t>& ids) {
    QVariantList l;
    for (int64_t id : ids) l << qint64(id);
    return l;
}

} // namespace

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
    const analyzer::Finding* f = index.isValid() ? finding(index.row()) : nullptr;
    if (!f) return {};
    switch (role) {
    case Qt::DisplayRole: return displayData(*f, index.column());
    case SortRole: return sortData(*f, index.column());
    case Qt::ToolTipRole:
        return QString::fromStdString(f->title) + QStringLiteral("\n\n") + evidenceText(*f) + QStringLiteral("\n\n") +
               QString::fromStdString(f->suggestion);
    case Qt::ForegroundRole: return foregroundData(*f, index.column());
    case RanksRole: return idList(f->ranks);
    case EventIdsRole: return idList(f->eventIds);
    case EvidenceRole: return evidenceText(*f);
    case SuggestionRole: return QString::fromStdString(f->suggestion);
    case IdRole: return QString::fromStdString(f->id);
    case SeverityRole: return int(f->severity);
    default: return {};
    }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"Severity", "Finding", "Ranks", "Gain"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

} // namespace hpcprof::gui
