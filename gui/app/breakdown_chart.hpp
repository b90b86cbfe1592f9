// SPDX-License-Identifier: MIT
// Per-rank stacked bars of the analyzer's exclusive time classes (compute, communication, io,
// memory, sync, idle), each bar 100 % of the rank's window. Clicking a bar asks to show the rank.
#pragma once

#include <QWidget>

#include "models/analysis_models.hpp"

namespace hpcprof::gui {

class BreakdownChart : public QWidget {
    Q_OBJECT
public:
    explicit BreakdownChart(QWidget* parent = nullptr);
    void setAnalysis(AnalysisPtr a);
    QSize sizeHint() const override;

signals:
    void rankActivated(int64_t rank);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent*) override;

private:
    static constexpr int kBarHeight = 16, kLabelWidth = 80, kLegendHeight = 22;
    AnalysisPtr m_a;
};

} // namespace hpcprof::gui
