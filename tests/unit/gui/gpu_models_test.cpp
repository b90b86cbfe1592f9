// SPDX-License-Identifier: MIT
// The Kernels, GPU idle and Steps models: exact values on the "classes" trace (one kernel with a
// known launch), the real PyTorch profiler traces in tests/data/kineto compared with SQL over
// the same trace, and a clear empty state without GPU kernels or steps.
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "gui_test_support.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/import/importer.hpp"
#include "models/gpu_models.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using namespace hpcprof::gui;

namespace {
AnalysisPtr analyse(const std::string& path, analyzer::WindowSpec::Kind window = analyzer::WindowSpec::Kind::Default) {
    auto trace = analyzer::Trace::open(path);
    REQUIRE(trace.ok());
    analyzer::AnalysisOptions o;
    o.window.kind = window;
    auto a = analyzer::analyzeTrace(*trace, o);
    REQUIRE(a.ok());
    return std::make_shared<analyzer::Analysis>(std::move(*a));
}

void checkModel(QAbstractItemModel* m) {
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(m);
    proxy.setSortRole(SortRole);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    for (int c = 0; c < m->columnCount(); ++c) proxy.sort(c, Qt::DescendingOrder);
}

qint64 num(const QAbstractItemModel& m, int row, int column) { return m.data(m.index(row, column), SortRole).toLongLong(); }
QString text(const QAbstractItemModel& m, int row, int column) { return m.data(m.index(row, column)).toString(); }

/// The row whose full name (tooltip) starts with `prefix`, -1 if none.
int rowNamed(const KernelStatsModel& m, const QString& prefix) {
    for (int r = 0; r < m.rowCount(); ++r)
        if (m.data(m.index(r, 0), Qt::ToolTipRole).toString().startsWith(prefix)) return r;
    return -1;
}
} // namespace

TEST_CASE("kernel, idle and step models of the classes trace show its one kernel and launch", "[gui][models][gpu]") {
    test::ensureGuiApp();
    test::TempDir dir;
    const std::string path = dir / "classes.hpcprof";
    test::writeClassesTrace(path);
    const AnalysisPtr a = analyse(path);

    KernelStatsModel k;
    checkModel(&k);
    k.setAnalysis(a);
    CHECK(k.emptyText().isEmpty());
    CHECK(k.ranks() == std::vector<int64_t>{0});
    const int row = rowNamed(k, QStringLiteral("gemm_kernel"));
    REQUIRE(row >= 0);
    // gemm_kernel [410, 450) us, launched by the cudaLaunchKernel that starts at 402 us.
    CHECK(num(k, row, KernelStatsModel::CountColumn) == 1);
    CHECK(num(k, row, KernelStatsModel::TotalColumn) == 40'000);
    CHECK(num(k, row, KernelStatsModel::MinColumn) == 40'000);
    CHECK(num(k, row, KernelStatsModel::MaxColumn) == 40'000);
    CHECK(k.data(k.index(row, KernelStatsModel::StdColumn), SortRole).toDouble() == 0.0);
    CHECK(k.data(k.index(row, KernelStatsModel::LaunchMeanColumn), SortRole).toDouble() == 8'000.0);
    CHECK(text(k, row, KernelStatsModel::LaunchMeanColumn) == QStringLiteral("8.00 us"));
    CHECK(text(k, row, KernelStatsModel::TotalColumn) == QStringLiteral("40.0 us"));
    k.setRank(0);
    CHECK(rowNamed(k, QStringLiteral("gemm_kernel")) >= 0);
    CHECK(k.data(k.index(rowNamed(k, QStringLiteral("gemm_kernel")), KernelStatsModel::LaunchMeanColumn), Qt::ToolTipRole)
              .toString() == QStringLiteral("1 launches; median 8.00 us, p95 8.00 us"));
    k.setRank(1); // rank 1 has no GPU
    CHECK(k.rowCount() == 0);
    k.setAnalysis(a); // a rank the analysis has no kernels for falls back to all ranks
    CHECK(k.rank() == -1);

    GpuIdleModel idle;
    checkModel(&idle);
    idle.setAnalysis(a);
    REQUIRE(idle.rowCount() == 1);
    CHECK(num(idle, 0, GpuIdleModel::RankColumn) == 0);
    CHECK(num(idle, 0, GpuIdleModel::IdleColumn) == a->ranks[0].gpuIdleNs);
    int64_t sum = 0;
    double shares = 0;
    for (int c = 0; c < kGpuIdleCauses; ++c) sum += num(idle, 0, GpuIdleModel::FirstCauseColumn + c);
    for (const QVariant& s : idle.data(idle.index(0, GpuIdleModel::SplitColumn), CauseSharesRole).toList()) shares += s.toDouble();
    CHECK(sum == a->ranks[0].gpuIdleNs);
    CHECK(shares == Approx(1.0));
    CHECK(idle.headerData(GpuIdleModel::FirstCauseColumn, Qt::Horizontal).toString() == QStringLiteral("kernel_wait"));
}

TEST_CASE("without GPU kernels or steps the views say so", "[gui][models][gpu]") {
    test::ensureGuiApp();
    auto none = std::make_shared<analyzer::Analysis>();
    KernelStatsModel k;
    GpuIdleModel idle;
    GpuGapsModel gaps;
    StepsModel steps;
    CHECK(k.emptyText() == QStringLiteral("Analysing..."));
    k.setAnalysis(none);
    idle.setAnalysis(none);
    gaps.setAnalysis(none);
    steps.setAnalysis(none);
    CHECK(k.rowCount() == 0);
    CHECK(k.emptyText() == QStringLiteral("No GPU kernels in this trace."));
    CHECK(idle.rowCount() == 0);
    CHECK(idle.emptyText() == QStringLiteral("No GPU kernels in this trace."));
    CHECK(gaps.rowCount() == 0);
    CHECK(steps.rowCount() == 0);
    CHECK(steps.summaryText().startsWith(QStringLiteral("No steps found")));
}

namespace {
/// Imports the real traces of tests/data/kineto into `dir`; "" when they are not there.
std::string importKineto(test::TempDir& dir) {
    const std::string data = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";
    if (!std::filesystem::exists(data + "/sampled_rank-0.json.gz")) {
        WARN("SKIPPED: " << data << " is not there");
        return {};
    }
    test::ensureGuiApp();
    import::ImportOptions o;
    o.inputs = {data};
    o.output = dir / "kineto.hpcprof";
    REQUIRE(import::importTraces(o).ok());
    return o.output.string();
}
} // namespace

TEST_CASE("the Kineto traces' kernels, all ranks pooled, agree with SQL over the trace", "[gui][models][gpu][kineto]") {
    test::TempDir dir;
    const std::string path = importKineto(dir);
    if (path.empty()) return;
    test::TraceQuery q(path);
    {
        const AnalysisPtr a = analyse(path, analyzer::WindowSpec::Kind::Whole);
        KernelStatsModel k;
        checkModel(&k);
        k.setAnalysis(a);
        CHECK(k.ranks() == std::vector<int64_t>{0, 1});
        const int row = rowNamed(k, QStringLiteral("ncclKernel_SendRecv"));
        REQUIRE(row >= 0);
        const std::string sql = "FROM event_view WHERE track_kind = 'gpu_stream' AND name LIKE 'ncclKernel_SendRecv%'";
        std::vector<double> durs;
        for (const std::string& d : q.rows("SELECT dur_ns " + sql)) durs.push_back(std::stod(d));
        double mean = 0, ss = 0;
        for (double d : durs) mean += d / double(durs.size());
        for (double d : durs) ss += (d - mean) * (d - mean);
        CHECK(num(k, row, KernelStatsModel::CountColumn) == 20);
        CHECK(num(k, row, KernelStatsModel::CountColumn) == q.scalar("SELECT COUNT(*) " + sql));
        CHECK(num(k, row, KernelStatsModel::TotalColumn) == q.scalar("SELECT SUM(dur_ns) " + sql));
        CHECK(num(k, row, KernelStatsModel::MinColumn) == q.scalar("SELECT MIN(dur_ns) " + sql));
        CHECK(num(k, row, KernelStatsModel::MaxColumn) == q.scalar("SELECT MAX(dur_ns) " + sql));
        CHECK(k.data(k.index(row, KernelStatsModel::StdColumn), SortRole).toDouble() ==
              Approx(std::sqrt(ss / double(durs.size() - 1))).epsilon(1e-9));
        CHECK(text(k, row, KernelStatsModel::NameColumn) == QStringLiteral("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"));
        CHECK(text(k, row, KernelStatsModel::ClassColumn) == QStringLiteral("communication"));
        k.setRank(1);
        const int r1 = rowNamed(k, QStringLiteral("ncclKernel_SendRecv"));
        REQUIRE(r1 >= 0);
        CHECK(num(k, r1, KernelStatsModel::CountColumn) == q.scalar("SELECT COUNT(*) " + sql + " AND rank = 1"));
    }
}

TEST_CASE("the Kineto traces' GPU idle causes add up and their longest gaps hold no GPU activity", "[gui][models][gpu][kineto]") {
    test::TempDir dir;
    const std::string path = importKineto(dir);
    if (path.empty()) return;
    test::TraceQuery q(path);
    const AnalysisPtr a = analyse(path);
    {
        GpuIdleModel idle;
        GpuGapsModel gaps;
        checkModel(&idle);
        checkModel(&gaps);
        idle.setAnalysis(a);
        gaps.setAnalysis(a);
        REQUIRE(idle.rowCount() == 2);
        for (int r = 0; r < 2; ++r) {
            int64_t sum = 0;
            for (int c = 0; c < kGpuIdleCauses; ++c) sum += num(idle, r, GpuIdleModel::FirstCauseColumn + c);
            CHECK(sum == num(idle, r, GpuIdleModel::IdleColumn));
            CHECK(sum == a->ranks[size_t(r)].gpuIdleNs);
        }
        REQUIRE(gaps.rowCount() == 10); // the 5 longest of each rank
        for (int g = 0; g < gaps.rowCount(); ++g) {
            const QModelIndex i = gaps.index(g, 0);
            const qint64 b = i.data(BeginRole).toLongLong(), e = i.data(EndRole).toLongLong();
            CHECK(e > b);
            CHECK(num(gaps, g, GpuGapsModel::DurationColumn) == e - b);
            CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE track_kind = 'gpu_stream' AND rank = " +
                           std::to_string(i.data(RankRole).toLongLong()) + " AND ts_ns < " + std::to_string(e) +
                           " AND ts_ns + dur_ns > " + std::to_string(b)) == 0);
        }
    }
}

TEST_CASE("the Kineto traces' steps are the ProfilerStep ranges with their breakdown", "[gui][models][gpu][kineto]") {
    test::TempDir dir;
    const std::string path = importKineto(dir);
    if (path.empty()) return;
    test::TraceQuery q(path);
    const AnalysisPtr a = analyse(path);
    {
        StepsModel steps;
        checkModel(&steps);
        steps.setAnalysis(a);
        CHECK(steps.summaryText().startsWith(QStringLiteral("2 steps: ")));
        REQUIRE(steps.rowCount() == 4); // 2 steps x 2 ranks, step by step
        for (int r = 0; r < 4; ++r) {
            const int64_t rank = num(steps, r, StepsModel::RankColumn), step = num(steps, r, StepsModel::StepColumn);
            CHECK(step == r / 2);
            const QModelIndex i = steps.index(r, 0);
            const std::string range = "FROM event_view WHERE name = 'ProfilerStep#" + std::to_string(551 + step) +
                                      "' AND rank = " + std::to_string(rank);
            CHECK(i.data(BeginRole).toLongLong() == q.scalar("SELECT ts_ns " + range));
            CHECK(num(steps, r, StepsModel::DurationColumn) == q.scalar("SELECT dur_ns " + range));
            int64_t classes = 0;
            for (int c = StepsModel::ComputeColumn; c <= StepsModel::IdleColumn; ++c) classes += num(steps, r, c);
            CHECK(classes == num(steps, r, StepsModel::DurationColumn));
        }
    }
}
