// SPDX-License-Identifier: MIT
#include "models/gpu_models.hpp"

#include <QVariantList>
#include <algorithm>
#include <cmath>
#include <map>

#include "families/gpu/gpu_idle_section.hpp"
#include "families/gpu/gpu_section.hpp"
#include "hpcprof/report/kernel_names.hpp"
#include "models/class_colors.hpp"
#include "models/format.hpp"

namespace hpcprof::gui {

namespace {
constexpr auto kRight = int(Qt::AlignRight | Qt::AlignVCenter);
const QString kNoGpu = QStringLiteral("No GPU kernels in this trace.");

QString header(const char* const* names, int count, int section) {
    return section >= 0 && section < count ? QString::fromLatin1(names[section]) : QString();
}
QString pct(double v) { return QString::number(100.0 * v, 'f', 1) + QStringLiteral(" %"); }
} // namespace

// The causes take the colour of the time class they stand for where there is one (input is I/O,
// communication, sync, memcpy is memory), so the idle bar reads like the breakdown.
QColor gpuIdleCauseColor(int cause) {
    switch (analyzer::GpuIdleCause(cause)) {
    case analyzer::GpuIdleCause::KernelWait: return QColor(0x17, 0xbe, 0xcf); // cyan: the GPU's own queue
    case analyzer::GpuIdleCause::Input: return timeClassColor(analyzer::TimeClass::Io);
    case analyzer::GpuIdleCause::Communication: return timeClassColor(analyzer::TimeClass::Communication);
    case analyzer::GpuIdleCause::Sync: return timeClassColor(analyzer::TimeClass::Sync);
    case analyzer::GpuIdleCause::Memcpy: return timeClassColor(analyzer::TimeClass::Memory);
    case analyzer::GpuIdleCause::Launch: return QColor(0x9e, 0x9e, 0x9e); // grey: CUDA API calls
    case analyzer::GpuIdleCause::Host: return QColor(0xf2, 0xc9, 0x4c);   // yellow: host computing
    }
    return Qt::lightGray;
}

QString gpuIdleCauseLabel(int cause) { return QString::fromLatin1(analyzer::gpuIdleCauseName(analyzer::GpuIdleCause(cause))); }

// ---- kernel statistics ----
namespace {
using Row = KernelStatsModel::Row;

/// A row with `k`'s name and class and no kernels yet.
Row named(const analyzer::KernelNameStats& k) {
    Row r;
    r.name = QString::fromStdString(k.name);
    r.cls = QString::fromLatin1(analyzer::kernelClassName(k.cls));
    return r;
}

Row rowOf(const analyzer::KernelNameStats& k) {
    Row r = named(k);
    r.count = k.count, r.totalNs = k.totalNs, r.minNs = k.minNs, r.maxNs = k.maxNs;
    r.meanNs = k.meanNs, r.stdNs = k.stdNs;
    r.launchCount = k.launch.count, r.launchMeanNs = k.launch.meanNs, r.launchMaxNs = k.launch.maxNs;
    r.launchMedianNs = k.launch.medianNs, r.launchP95Ns = k.launch.p95Ns;
    return r;
}

/// Adds `k` (another rank's kernels of the same name) to `r`; `sumSq` collects the sum of
/// squared durations, from which the pooled standard deviation follows.
void merge(Row& r, double& sumSq, const analyzer::KernelNameStats& k) {
    const double n = double(k.count);
    sumSq += (n - 1) * k.stdNs * k.stdNs + n * k.meanNs * k.meanNs;
    r.minNs = r.count ? std::min(r.minNs, k.minNs) : k.minNs;
    r.maxNs = std::max(r.maxNs, k.maxNs);
    r.count += k.count;
    r.totalNs += k.totalNs;
    r.launchMeanNs = (r.launchMeanNs * double(r.launchCount) + k.launch.meanNs * double(k.launch.count)) /
                     std::max<double>(1, double(r.launchCount + k.launch.count));
    r.launchCount += k.launch.count;
    r.launchMaxNs = std::max(r.launchMaxNs, k.launch.maxNs);
    r.launchMedianNs = r.launchP95Ns = -1; // percentiles do not combine
}

std::vector<Row> allRanks(const analyzer::GpuSection& s) {
    std::map<std::string, std::pair<Row, double>> byName;
    for (const auto& rank : s.ranks)
        for (const auto& k : rank.kernels) {
            auto [it, fresh] = byName.try_emplace(k.name);
            if (fresh) it->second.first = named(k);
            merge(it->second.first, it->second.second, k);
        }
    std::vector<Row> rows;
    for (auto& [name, e] : byName) {
        Row& r = e.first;
        const double n = double(r.count);
        r.meanNs = n > 0 ? double(r.totalNs) / n : 0;
        r.stdNs = n > 1 ? std::sqrt(std::max(0.0, (e.second - n * r.meanNs * r.meanNs) / (n - 1))) : 0;
        rows.push_back(std::move(r));
    }
    return rows;
}
} // namespace

void KernelStatsModel::setAnalysis(AnalysisPtr a) {
    m_a = std::move(a);
    const auto have = ranks();
    if (std::find(have.begin(), have.end(), m_rank) == have.end()) m_rank = -1; // a trace without that rank
    rebuild();
}

void KernelStatsModel::setRank(int64_t rank) {
    m_rank = rank;
    rebuild();
}

void KernelStatsModel::rebuild() {
    beginResetModel();
    m_rows.clear();
    const analyzer::GpuSection* s = m_a ? analyzer::gpuSection(*m_a) : nullptr;
    if (s && m_rank < 0) m_rows = allRanks(*s);
    for (const auto& rank : s && m_rank >= 0 ? s->ranks : std::vector<analyzer::GpuKernelRank>{})
        if (rank.rank == m_rank)
            for (const auto& k : rank.kernels) m_rows.push_back(rowOf(k));
    std::stable_sort(m_rows.begin(), m_rows.end(), [](const Row& x, const Row& y) { return x.totalNs > y.totalNs; });
    // Short names are told apart within the table (kernel_names.hpp).
    std::vector<std::string> full;
    for (const Row& r : m_rows) full.push_back(r.name.toStdString());
    const std::vector<std::string> shorts = analyzer::shortKernelNames({full.begin(), full.end()});
    for (size_t i = 0; i < m_rows.size(); ++i) m_rows[i].shortName = QString::fromStdString(shorts[i]);
    endResetModel();
}

std::vector<int64_t> KernelStatsModel::ranks() const {
    std::vector<int64_t> out;
    if (const analyzer::GpuSection* s = m_a ? analyzer::gpuSection(*m_a) : nullptr)
        for (const auto& r : s->ranks)
            if (!r.kernels.empty()) out.push_back(r.rank);
    return out;
}

QString KernelStatsModel::emptyText() const {
    if (!m_a) return QStringLiteral("Analysing...");
    return m_rows.empty() ? kNoGpu : QString();
}

int KernelStatsModel::rowCount(const QModelIndex& p) const { return p.isValid() ? 0 : int(m_rows.size()); }
int KernelStatsModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QVariant KernelStatsModel::raw(const Row& r, int c) const {
    switch (c) {
    case NameColumn: return r.shortName;
    case ClassColumn: return r.cls;
    case CountColumn: return qint64(r.count);
    case TotalColumn: return qint64(r.totalNs);
    case MeanColumn: return r.meanNs;
    case MinColumn: return qint64(r.minNs);
    case MaxColumn: return qint64(r.maxNs);
    case StdColumn: return r.stdNs;
    case LaunchMeanColumn: return r.launchCount ? QVariant(r.launchMeanNs) : QVariant(-1.0);
    default: return r.launchCount ? qint64(r.launchMaxNs) : qint64(-1);
    }
}

namespace {
/// The full name on the name, the launch count (and percentiles for one rank) on the latency.
QVariant kernelTooltip(const Row& r, int c) {
    if (c == KernelStatsModel::NameColumn) return r.name;
    if (c < KernelStatsModel::LaunchMeanColumn || r.launchCount == 0) return {};
    if (r.launchMedianNs < 0) return QStringLiteral("%1 launches").arg(r.launchCount);
    return QStringLiteral("%1 launches; median %2, p95 %3")
        .arg(r.launchCount)
        .arg(formatDuration(r.launchMedianNs), formatDuration(r.launchP95Ns));
}
} // namespace

QVariant KernelStatsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size()) return {};
    const Row& r = m_rows[size_t(index.row())];
    const int c = index.column();
    if (role == SortRole) return raw(r, c);
    if (role == Qt::ToolTipRole) return kernelTooltip(r, c);
    if (role == Qt::TextAlignmentRole) return c > ClassColumn ? QVariant(kRight) : QVariant();
    if (role != Qt::DisplayRole) return {};
    if (c == NameColumn || c == ClassColumn || c == CountColumn) return raw(r, c);
    if (c >= LaunchMeanColumn && r.launchCount == 0) return QStringLiteral("-");
    return formatDuration(int64_t(std::llround(raw(r, c).toDouble())));
}

QVariant KernelStatsModel::headerData(int section, Qt::Orientation o, int role) const {
    static const char* kNames[] = {"Kernel", "Class", "Count", "Total", "Mean", "Min", "Max", "Std", "Launch mean", "Launch max"};
    if (o == Qt::Horizontal && role == Qt::ToolTipRole && section >= LaunchMeanColumn)
        return QStringLiteral("Launch latency: the kernel's start minus the start of the API call that launched it");
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    return header(kNames, ColumnCount, section);
}

// ---- GPU idle by cause ----
namespace {
const analyzer::GpuIdleRank* idleRank(const AnalysisPtr& a, int row) {
    const analyzer::GpuIdleSection* s = a ? analyzer::gpuIdleSection(*a) : nullptr;
    return s && row >= 0 && size_t(row) < s->ranks.size() ? &s->ranks[size_t(row)] : nullptr;
}

QVariantList causeShares(const analyzer::GpuIdleRank& r) {
    QVariantList shares;
    for (int64_t ns : r.byCause) shares.push_back(r.idleNs > 0 ? double(ns) / double(r.idleNs) : 0.0);
    return shares;
}

QVariant causeCell(int cause, int role) {
    if (role == Qt::DecorationRole) return gpuIdleCauseColor(cause);
    if (role == Qt::DisplayRole || role == SortRole) return gpuIdleCauseLabel(cause);
    return {};
}
} // namespace

QString GpuIdleModel::emptyText() const {
    if (!m_a) return QStringLiteral("Analysing...");
    return rowCount() == 0 ? kNoGpu : QString();
}

int GpuIdleModel::rowCount(const QModelIndex& p) const {
    const analyzer::GpuIdleSection* s = m_a ? analyzer::gpuIdleSection(*m_a) : nullptr;
    return p.isValid() || !s ? 0 : int(s->ranks.size());
}
int GpuIdleModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QVariant GpuIdleModel::data(const QModelIndex& index, int role) const {
    const analyzer::GpuIdleRank* r = index.isValid() ? idleRank(m_a, index.row()) : nullptr;
    if (!r) return {};
    const int c = index.column();
    if (role == RankRole) return qint64(r->rank);
    if (role == CauseSharesRole) return causeShares(*r);
    const bool cause = c >= FirstCauseColumn;
    const int64_t ns = c == RankColumn ? r->rank : cause ? r->byCause[size_t(c - FirstCauseColumn)] : r->idleNs;
    if (role == SortRole) return qint64(ns);
    if (role == Qt::DecorationRole && cause) return gpuIdleCauseColor(c - FirstCauseColumn);
    if (role == Qt::TextAlignmentRole) return kRight;
    if (role != Qt::DisplayRole || c == SplitColumn) return {};
    if (c == RankColumn) return qint64(r->rank);
    if (!cause) return formatDuration(ns);
    return formatDuration(ns) + QStringLiteral("  ") + pct(causeShares(*r)[c - FirstCauseColumn].toDouble());
}

QVariant GpuIdleModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section >= FirstCauseColumn && section < ColumnCount) return gpuIdleCauseLabel(section - FirstCauseColumn);
    static const char* kNames[] = {"Rank", "GPU idle", "By cause"};
    return header(kNames, FirstCauseColumn, section);
}

// ---- longest gaps ----
void GpuGapsModel::setAnalysis(AnalysisPtr a) {
    beginResetModel();
    m_a = std::move(a);
    m_gaps.clear();
    if (const analyzer::GpuIdleSection* s = m_a ? analyzer::gpuIdleSection(*m_a) : nullptr)
        for (const auto& r : s->ranks)
            for (const auto& g : r.longestGaps) m_gaps.push_back({r.rank, g.begin, g.end, int(g.cause)});
    endResetModel();
}

int GpuGapsModel::rowCount(const QModelIndex& p) const { return p.isValid() ? 0 : int(m_gaps.size()); }
int GpuGapsModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QVariant GpuGapsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_gaps.size()) return {};
    const Gap& g = m_gaps[size_t(index.row())];
    const int c = index.column();
    if (role == BeginRole || role == EndRole || role == RankRole)
        return qint64(role == BeginRole ? g.begin : role == EndRole ? g.end : g.rank);
    if (c == CauseColumn) return causeCell(g.cause, role);
    const int64_t ns = c == RankColumn ? g.rank : c == StartColumn ? g.begin : g.end - g.begin;
    if (role == SortRole) return qint64(ns);
    if (role == Qt::DisplayRole) return c == RankColumn ? QVariant(qint64(ns)) : QVariant(formatDuration(ns));
    if (role == Qt::TextAlignmentRole) return kRight;
    return {};
}

QVariant GpuGapsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"Rank", "Start", "Gap", "Mostly"};
    return header(kNames, ColumnCount, section);
}

// ---- steps ----
namespace {
constexpr analyzer::TimeClass kStepClasses[] = {analyzer::TimeClass::Compute, analyzer::TimeClass::Communication,
                                                analyzer::TimeClass::Memory, analyzer::TimeClass::Sync,
                                                analyzer::TimeClass::Io, analyzer::TimeClass::Idle};
} // namespace

void StepsModel::setAnalysis(AnalysisPtr a) {
    beginResetModel();
    m_a = std::move(a);
    m_rows.clear();
    for (size_t r = 0; m_a && r < m_a->steps.ranks.size(); ++r)
        for (size_t i = 0; i < m_a->steps.ranks[r].steps.size(); ++i) m_rows.emplace_back(r, i);
    // Step by step, the ranks of a step together.
    std::stable_sort(m_rows.begin(), m_rows.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    endResetModel();
}

QString StepsModel::summaryText() const {
    if (!m_a) return QStringLiteral("Analysing...");
    const auto& s = m_a->steps;
    if (s.steps.empty()) return QStringLiteral("No steps found in this trace (docs/analysis.md, \"Steps\").");
    return QStringLiteral("%1 steps: %2. Mean %3, min %4, max %5, cv %6. Select a step to zoom the timeline to it.")
        .arg(s.steps.size())
        .arg(QString::fromStdString(s.reason.empty() ? s.source : s.reason), formatDuration(s.meanNs),
             formatDuration(s.minNs), formatDuration(s.maxNs), QString::number(s.cv, 'f', 3));
}

int StepsModel::rowCount(const QModelIndex& p) const { return p.isValid() ? 0 : int(m_rows.size()); }
int StepsModel::columnCount(const QModelIndex& p) const { return p.isValid() ? 0 : ColumnCount; }

QVariant StepsModel::raw(int row, int c) const {
    const auto [r, i] = m_rows[size_t(row)];
    const analyzer::RankSteps& rs = m_a->steps.ranks[r];
    const analyzer::RankStep& st = rs.steps[i];
    // A rank's list may hold only its slowest steps (StepStats::slowestPerRank): the step's
    // own number, not its place in the list, names it and finds the job's step.
    const size_t k = size_t(st.index);
    const analyzer::Step* step = k < m_a->steps.steps.size() ? &m_a->steps.steps[k] : nullptr;
    switch (c) {
    case StepColumn: return qint64(st.index);
    case RankColumn: return qint64(rs.rank);
    case StartColumn: return qint64(st.begin);
    case DurationColumn: return qint64(st.durNs());
    case GpuIdleColumn: return qint64(st.gpuIdleNs);
    case CommStartColumn: return st.commStartFraction;
    case StragglerColumn: return step && step->stragglerRank == rs.rank ? qint64(step->stragglerWaitNs) : qint64(-1);
    default: return qint64(st.exclusive[int(kStepClasses[c - ComputeColumn])]);
    }
}

QVariant StepsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || size_t(index.row()) >= m_rows.size()) return {};
    const auto [r, i] = m_rows[size_t(index.row())];
    const analyzer::RankStep& st = m_a->steps.ranks[r].steps[i];
    const int c = index.column();
    if (role == BeginRole) return qint64(st.begin);
    if (role == EndRole) return qint64(st.end);
    if (role == RankRole) return qint64(m_a->steps.ranks[r].rank);
    const QVariant v = raw(index.row(), c);
    if (role == SortRole) return v;
    if (role == Qt::TextAlignmentRole) return kRight;
    if (role == Qt::DecorationRole)
        return c >= ComputeColumn && c <= IdleColumn ? QVariant(timeClassColor(kStepClasses[c - ComputeColumn])) : QVariant();
    if (role == Qt::ToolTipRole && c == StragglerColumn && v.toLongLong() >= 0)
        return QStringLiteral("the other ranks waited %1 for this rank's communication kernels in this step")
            .arg(formatDuration(v.toLongLong()));
    if (role != Qt::DisplayRole) return {};
    return display(v, c, st.hasBreakdown);
}

QVariant StepsModel::display(const QVariant& v, int c, bool hasBreakdown) {
    if (c == StepColumn || c == RankColumn) return v;
    if (c == CommStartColumn) return v.toDouble() >= 0 ? QString::number(v.toDouble(), 'f', 2) : QStringLiteral("-");
    if (c == StragglerColumn) return v.toLongLong() >= 0 ? QStringLiteral("others waited ") + formatDuration(v.toLongLong()) : QString();
    if (c >= ComputeColumn && c <= GpuIdleColumn && !hasBreakdown) return QStringLiteral("-");
    return formatDuration(v.toLongLong());
}

QVariant StepsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {"Step", "Rank", "Start", "Duration", "compute", "communication", "memory",
                                   "sync", "io", "idle", "GPU idle", "Comm starts at", "Straggler"};
    return header(kNames, ColumnCount, section);
}

} // namespace hpcprof::gui
