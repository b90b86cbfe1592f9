// SPDX-License-Identifier: MIT
#include "breakdown_chart.hpp"

#include <QMouseEvent>
#include <QPainter>

#include "models/class_colors.hpp"

namespace hpcprof::gui {

BreakdownChart::BreakdownChart(QWidget* parent) : QWidget(parent) { setMinimumHeight(80); }

void BreakdownChart::setAnalysis(AnalysisPtr a) {
    m_a = std::move(a);
    updateGeometry();
    update();
}

QSize BreakdownChart::sizeHint() const {
    const int n = m_a ? int(m_a->ranks.size()) : 4;
    return {500, kLegendHeight + n * (kBarHeight + 2) + 8};
}

void BreakdownChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!m_a) {
        p.drawText(rect(), Qt::AlignCenter, tr("analysing..."));
        return;
    }
    int x = 4;
    for (int c = 0; c < analyzer::kTimeClassCount; ++c) {
        p.fillRect(QRect(x, 5, 12, 12), timeClassColor(analyzer::TimeClass(c)));
        QString name = QString::fromLatin1(analyzer::timeClassName(analyzer::TimeClass(c)));
        p.setPen(Qt::black);
        p.drawText(QPoint(x + 16, 16), name);
        x += 24 + p.fontMetrics().horizontalAdvance(name);
    }
    const int w = width() - kLabelWidth - 8;
    int y = kLegendHeight;
    for (const auto& r : m_a->ranks) {
        p.setPen(Qt::black);
        p.drawText(QRect(4, y, kLabelWidth - 8, kBarHeight), Qt::AlignVCenter | Qt::AlignLeft,
                   tr("rank %1%2").arg(r.rank).arg(r.gpu ? QStringLiteral(" GPU") : QString()));
        double acc = 0;
        for (int c = 0; c < analyzer::kTimeClassCount && r.windowNs > 0; ++c) {
            double part = double(r.exclusive[c]) / double(r.windowNs) * w;
            p.fillRect(QRectF(kLabelWidth + acc, y, part, kBarHeight), timeClassColor(analyzer::TimeClass(c)));
            acc += part;
        }
        y += kBarHeight + 2;
    }
}

void BreakdownChart::mousePressEvent(QMouseEvent* e) {
    if (!m_a) return;
    int row = (e->pos().y() - kLegendHeight) / (kBarHeight + 2);
    if (row >= 0 && row < int(m_a->ranks.size())) emit rankActivated(m_a->ranks[size_t(row)].rank);
}

} // namespace hpcprof::gui
