// SPDX-License-Identifier: MIT
// The GPU and step views of the main window: kernel statistics per name (a rank or all ranks),
// GPU idle time by cause with its longest gaps, and the steps; a gap or a step zooms the
// timeline to it. Each says why it is empty on a trace without GPU kernels or steps.
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPainter>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include "main_window.hpp"
#include "models/gpu_models.hpp"

namespace hpcprof::gui {

namespace {

/// Draws a rank's GPU idle time as a bar split by cause (CauseSharesRole) in the cause colours.
class CauseBarDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        QStyledItemDelegate::paint(p, option, index);
        const QVariantList shares = index.data(CauseSharesRole).toList();
        const QRectF box = QRectF(option.rect).adjusted(3, 4, -3, -4);
        double x = box.left();
        for (int c = 0; c < shares.size(); ++c) {
            const double w = shares[c].toDouble() * box.width();
            p->fillRect(QRectF(x, box.top(), w, box.height()), gpuIdleCauseColor(c));
            x += w;
        }
    }
    QSize sizeHint(const QStyleOptionViewItem& o, const QModelIndex& i) const override {
        return QStyledItemDelegate::sizeHint(o, i).expandedTo(QSize(200, 18));
    }
};

/// "■ kernel_wait  ■ input ..." in the cause colours, for the GPU idle view's legend.
QString causeLegend() {
    QString h;
    for (int c = 0; c < kGpuIdleCauses; ++c)
        h += QStringLiteral("<span style='background:%1'>&nbsp;&nbsp;&nbsp;</span> %2&nbsp;&nbsp; ")
                 .arg(gpuIdleCauseColor(c).name(), gpuIdleCauseLabel(c));
    return h;
}

QModelIndex sourceIndex(QTableView* view, const QModelIndex& proxyIndex) {
    return static_cast<QSortFilterProxyModel*>(view->model())->mapToSource(proxyIndex);
}

/// A label above a table: the table's message (why it is empty, or what it shows).
QLabel* noteLabel(QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    return l;
}
} // namespace

void MainWindow::buildGpuViews() {
    m_tabs->addTab(buildKernelsView(), tr("Kernels"));
    m_tabs->addTab(buildGpuIdleView(), tr("GPU idle"));
    m_tabs->addTab(buildStepsView(), tr("Steps"));
}

void MainWindow::zoomToInterval(int64_t begin, int64_t end, int64_t rank) {
    const int64_t pad = std::max<int64_t>((end - begin) / 20, 1000);
    m_timeline->showWindow({begin - pad, end + pad}, true);
    m_timeline->scrollToRank(rank);
}

QWidget* MainWindow::buildKernelsView() {
    auto* page = new QWidget(m_tabs);
    auto* layout = new QVBoxLayout(page);
    auto* bar = new QHBoxLayout;
    auto* rank = new QComboBox(page);
    auto* note = noteLabel(page);
    bar->addWidget(new QLabel(tr("Rank:"), page));
    bar->addWidget(rank);
    bar->addWidget(note, 1);
    layout->addLayout(bar);
    m_kernelStats = new KernelStatsModel(this);
    auto* kernels = sortedTable(m_kernelStats, page, KernelStatsModel::TotalColumn);
    // The kernel's name is what people read: it takes the room, the figures keep their width.
    kernels->horizontalHeader()->setStretchLastSection(false);
    kernels->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    layout->addWidget(kernels);
    connect(m_kernelStats, &QAbstractItemModel::modelReset, page, [this, rank, note] {
        note->setText(m_kernelStats->emptyText());
        QList<QVariant> wanted{qint64(-1)};
        for (int64_t r : m_kernelStats->ranks()) wanted.push_back(qint64(r));
        QList<QVariant> have;
        for (int i = 0; i < rank->count(); ++i) have.push_back(rank->itemData(i));
        const QSignalBlocker block(rank);
        if (have != wanted) {
            rank->clear();
            for (const QVariant& r : wanted)
                rank->addItem(r.toLongLong() < 0 ? tr("all ranks") : tr("rank %1").arg(r.toLongLong()), r);
        }
        rank->setCurrentIndex(std::max(0, rank->findData(qint64(m_kernelStats->rank()))));
    });
    connect(rank, &QComboBox::currentIndexChanged, this,
            [this, rank](int i) { m_kernelStats->setRank(i < 0 ? -1 : rank->itemData(i).toLongLong()); });
    return page;
}

QWidget* MainWindow::buildGpuIdleView() {
    auto* page = new QWidget(m_tabs);
    auto* layout = new QVBoxLayout(page);
    auto* note = noteLabel(page);
    layout->addWidget(note);
    auto* split = new QSplitter(Qt::Vertical, page);
    m_gpuIdle = new GpuIdleModel(this);
    auto* idle = sortedTable(m_gpuIdle, split, GpuIdleModel::RankColumn);
    idle->sortByColumn(GpuIdleModel::RankColumn, Qt::AscendingOrder);
    idle->setItemDelegateForColumn(GpuIdleModel::SplitColumn, new CauseBarDelegate(idle));
    idle->horizontalHeader()->setStretchLastSection(false);
    idle->horizontalHeader()->setSectionResizeMode(GpuIdleModel::SplitColumn, QHeaderView::Stretch);
    m_gpuGaps = new GpuGapsModel(this);
    auto* gaps = sortedTable(m_gpuGaps, split, GpuGapsModel::DurationColumn);
    split->addWidget(idle);
    split->addWidget(gaps);
    layout->addWidget(split, 1);
    connect(m_gpuIdle, &QAbstractItemModel::modelReset, page, [this, note] {
        const QString empty = m_gpuIdle->emptyText();
        note->setText(!empty.isEmpty() ? empty
                                       : tr("Why each GPU idles, by cause: %1<br>Below, the longest gaps; "
                                            "double-click one to zoom the timeline to it.").arg(causeLegend()));
    });
    connect(gaps, &QTableView::activated, this, [this, gaps](const QModelIndex& proxyIndex) {
        const QModelIndex i = sourceIndex(gaps, proxyIndex);
        zoomToInterval(i.data(BeginRole).toLongLong(), i.data(EndRole).toLongLong(), i.data(RankRole).toLongLong());
    });
    return page;
}

QWidget* MainWindow::buildStepsView() {
    auto* page = new QWidget(m_tabs);
    auto* layout = new QVBoxLayout(page);
    auto* note = noteLabel(page);
    layout->addWidget(note);
    m_steps = new StepsModel(this);
    auto* steps = sortedTable(m_steps, page, StepsModel::StepColumn);
    steps->sortByColumn(StepsModel::StepColumn, Qt::AscendingOrder);
    layout->addWidget(steps, 1);
    connect(m_steps, &QAbstractItemModel::modelReset, page, [this, note] { note->setText(m_steps->summaryText()); });
    connect(steps->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this, steps](const QModelIndex& proxyIndex) {
                if (!proxyIndex.isValid()) return;
                const QModelIndex i = sourceIndex(steps, proxyIndex);
                zoomToInterval(i.data(BeginRole).toLongLong(), i.data(EndRole).toLongLong(), i.data(RankRole).toLongLong());
            });
    return page;
}

} // namespace hpcprof::gui
