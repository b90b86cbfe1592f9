// SPDX-License-Identifier: MIT
#include "models/rank_filter.hpp"

#include <QRegularExpression>

#include "models/analysis_models.hpp"

namespace hpcprof::gui {

std::optional<RankFilter> parseRankFilter(const QString& text, bool* ok) {
    *ok = true;
    const QString t = text.trimmed();
    if (t.isEmpty()) return std::nullopt;
    static const QRegularExpression re(QStringLiteral("^([a-z]+)\\s*([<>])\\s*([0-9]+(?:\\.[0-9]*)?)\\s*%?$"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(t);
    *ok = false;
    if (!m.hasMatch()) return std::nullopt;
    const QString name = m.captured(1).toLower();
    for (int c = 0; c < analyzer::kTimeClassCount; ++c) {
        if (name != QLatin1String(analyzer::timeClassName(analyzer::TimeClass(c)))) continue;
        *ok = true;
        return RankFilter{analyzer::TimeClass(c), m.captured(2) == QLatin1String(">"), m.captured(3).toDouble()};
    }
    return std::nullopt;
}

void RankFilterProxy::setRankFilter(std::optional<RankFilter> f) {
    m_filter = f;
    invalidateFilter();
}

bool RankFilterProxy::filterAcceptsRow(int row, const QModelIndex& parent) const {
    if (!m_filter) return true;
    const auto* src = sourceModel();
    const double window = src->index(row, BreakdownModel::WindowColumn, parent).data(SortRole).toDouble();
    const double ns =
        src->index(row, BreakdownModel::FirstClassColumn + int(m_filter->cls), parent).data(SortRole).toDouble();
    const double pct = window > 0 ? 100.0 * ns / window : 0;
    return m_filter->greater ? pct > m_filter->pct : pct < m_filter->pct;
}

std::vector<int64_t> RankFilterProxy::rankOrder() const {
    std::vector<int64_t> out;
    for (int r = 0; r < rowCount(); ++r) out.push_back(index(r, 0).data(RankRole).toLongLong());
    return out;
}

} // namespace hpcprof::gui
