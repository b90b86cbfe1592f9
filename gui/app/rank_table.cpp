// SPDX-License-Identifier: MIT
#include "rank_table.hpp"

#include <QHeaderView>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

#include "models/analysis_models.hpp"
#include "models/rank_filter.hpp"

namespace hpcprof::gui {

RankTable::RankTable(BreakdownModel* model, QWidget* parent) : QWidget(parent), m_proxy(new RankFilterProxy(this)) {
    auto* filter = new QLineEdit(this);
    filter->setPlaceholderText(tr("Filter ranks, e.g. comm>30 or compute<50 (% of the rank's window)"));
    filter->setClearButtonEnabled(true);
    m_proxy->setSourceModel(model);
    m_proxy->setSortRole(SortRole);
    auto* view = new QTableView(this);
    view->setModel(m_proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(BreakdownModel::RankColumn, Qt::AscendingOrder);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    view->setAlternatingRowColors(true);
    auto* box = new QVBoxLayout(this);
    box->setContentsMargins(0, 0, 0, 0);
    box->addWidget(filter);
    box->addWidget(view);
    connect(filter, &QLineEdit::textChanged, this, [this, filter](const QString& text) {
        bool ok = true;
        auto f = parseRankFilter(text, &ok);
        filter->setStyleSheet(ok ? QString() : QStringLiteral("color: #c62828"));
        if (ok) m_proxy->setRankFilter(f);
    });
    auto emitOrder = [this] { emit ranksOrdered(m_proxy->rankOrder(), m_proxy->filtering()); };
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, emitOrder);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, emitOrder);
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, emitOrder);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, emitOrder);
}

} // namespace hpcprof::gui
