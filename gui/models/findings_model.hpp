// SPDX-License-Identifier: MIT
// The advice findings as a table: severity, title, ranks involved, gain (exclusive, and alone);
// the evidence, suggestion, ranks and example events are custom roles so the view can explain a finding and the
// timeline can zoom to it.
#pragma once

#include <QAbstractTableModel>

#include "models/analysis_models.hpp"

namespace hpcprof::gui {

class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SeverityColumn, TitleColumn, RanksColumn, GainColumn, ColumnCount };
    enum Role { RanksRole = Qt::UserRole + 10, EventIdsRole, EvidenceRole, SuggestionRole, IdRole, SeverityRole };

    explicit FindingsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setAnalysis(AnalysisPtr a);
    const analyzer::Finding* finding(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    /// "key = value unit" lines of a finding's evidence.
    static QString evidenceText(const analyzer::Finding& f);

private:
    AnalysisPtr m_a;
};

} // namespace hpcprof::gui
