// SPDX-License-Identifier: MIT
// The GUI models pass QAbstractItemModelTester and show exactly the analyzer's results for the
// known "classes" trace; event lookup and search answer from the trace.
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <catch2/catch.hpp>

#include "gui_test_support.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "models/analysis_models.hpp"
#include "models/event_lookup.hpp"
#include "models/findings_model.hpp"
#include "models/lane_model.hpp"
#include "models/search.hpp"
#include "models/trace_session.hpp"
#include "process_runner.hpp"

using namespace hpcprof;
using namespace hpcprof::gui;

namespace {
struct Fixture {
    test::TempDir dir;
    std::string path = dir / "classes.hpcprof";
    TraceDataPtr data;
    AnalysisPtr analysis;
    Fixture() {
        test::ensureGuiApp();
        test::writeClassesTrace(path);
        auto d = loadTraceData(path);
        REQUIRE(d.ok());
        data = *d;
        auto trace = analyzer::Trace::open(path);
        REQUIRE(trace.ok());
        auto a = analyzer::analyzeTrace(*trace);
        REQUIRE(a.ok());
        analysis = std::make_shared<analyzer::Analysis>(std::move(*a));
    }
};

void checkModel(QAbstractItemModel* m) {
    QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(m);
    proxy.setSortRole(SortRole);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    for (int c = 0; c < m->columnCount(); ++c) proxy.sort(c, Qt::DescendingOrder);
}
} // namespace

TEST_CASE("trace data holds the trace's processes, tracks and bounds", "[gui][models]") {
    Fixture f;
    CHECK(f.data->rankCount == 2);
    CHECK(f.data->index.tracks().size() == 3);
    CHECK(f.data->events == 209);
    CHECK(f.data->bounds == TimeWindow{0, 1'000'000});
    CHECK_FALSE(f.data->hasDataLoss());
}

TEST_CASE("lane model lists a group per rank with its lanes and passes the model tester", "[gui][models]") {
    Fixture f;
    LaneLayout layout;
    layout.build(*f.data);
    LaneModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
    m.setTrace(f.data, layout);
    REQUIRE(m.rowCount() == 2);
    const QModelIndex g0 = m.index(0, 0);
    CHECK(m.data(g0, LaneModel::RankRole).toLongLong() == 0);
    REQUIRE(m.rowCount(g0) == 2);
    CHECK(m.data(m.index(0, LaneModel::EventsColumn), Qt::DisplayRole).toLongLong() == 8);
    CHECK(m.data(m.index(1, LaneModel::KindColumn, g0)).toString() == QStringLiteral("gpu_stream"));
    CHECK(m.data(m.index(1, LaneModel::EventsColumn, g0)).toLongLong() == 2);
    const QModelIndex g1 = m.index(1, 0);
    CHECK(m.data(g1, LaneModel::RankRole).toLongLong() == 1);
    REQUIRE(m.rowCount(g1) == 1);
    CHECK(m.data(m.index(0, LaneModel::EventsColumn, g1)).toLongLong() == 201);
    CHECK(m.parent(m.index(0, 0, g1)) == g1);
}

TEST_CASE("breakdown model shows the analyzer's per-rank exclusive times", "[gui][models]") {
    Fixture f;
    BreakdownModel m;
    checkModel(&m);
    m.setAnalysis(f.analysis);
    checkModel(&m);
    REQUIRE(m.rowCount() == int(f.analysis->ranks.size()));
    REQUIRE(m.rowCount() == 2);
    for (int r = 0; r < m.rowCount(); ++r) {
        const auto& rb = f.analysis->ranks[size_t(r)];
        CHECK(m.data(m.index(r, BreakdownModel::RankColumn), RankRole).toLongLong() == rb.rank);
        int64_t sum = 0;
        for (int c = 0; c < analyzer::kTimeClassCount; ++c) {
            const qint64 v = m.data(m.index(r, BreakdownModel::FirstClassColumn + c), SortRole).toLongLong();
            CHECK(v == rb.exclusive[c]);
            sum += v;
        }
        CHECK(sum == m.data(m.index(r, BreakdownModel::WindowColumn), SortRole).toLongLong());
    }
    // Rank 0: [100, 200) us of compute, 100 us of io; rank 1: 200 x 100 ns of io.
    CHECK(m.data(m.index(0, BreakdownModel::FirstClassColumn + int(analyzer::TimeClass::Io)), SortRole).toLongLong() == 100'000);
    CHECK(m.data(m.index(1, BreakdownModel::FirstClassColumn + int(analyzer::TimeClass::Io)), SortRole).toLongLong() == 20'000);
}

TEST_CASE("POP, top-item, warning and findings models mirror the analysis", "[gui][models]") {
    Fixture f;
    PopModel pop;
    TopItemsModel kernels(TopItemsModel::Kind::Kernels), colls(TopItemsModel::Kind::Collectives),
        files(TopItemsModel::Kind::Files);
    WarningsModel warnings;
    FindingsModel findings;
    for (QAbstractItemModel* m : std::initializer_list<QAbstractItemModel*>{&pop, &kernels, &colls, &files, &warnings, &findings})
        checkModel(m);
    pop.setAnalysis(f.analysis);
    kernels.setAnalysis(f.analysis);
    colls.setAnalysis(f.analysis);
    files.setAnalysis(f.analysis);
    warnings.setAnalysis(f.analysis);
    findings.setAnalysis(f.analysis);
    for (QAbstractItemModel* m : std::initializer_list<QAbstractItemModel*>{&pop, &kernels, &colls, &files, &warnings, &findings})
        checkModel(m);

    CHECK(pop.rowCount() == 7);
    CHECK(pop.data(pop.index(1, 1), SortRole).toDouble() == Approx(f.analysis->pop.loadBalance));
    CHECK(pop.data(pop.index(5, 1), SortRole).toLongLong() == f.analysis->pop.runtimeNs);

    REQUIRE(kernels.rowCount() == int(f.analysis->topKernels.size()));
    REQUIRE(kernels.rowCount() == 1);
    CHECK(kernels.data(kernels.index(0, TopItemsModel::NameColumn)).toString() == QStringLiteral("gemm_kernel"));
    CHECK(kernels.data(kernels.index(0, TopItemsModel::TotalColumn), SortRole).toLongLong() == 40'000);
    REQUIRE(colls.rowCount() == int(f.analysis->topCollectives.size()));
    REQUIRE(colls.rowCount() >= 1);
    CHECK(colls.data(colls.index(0, TopItemsModel::NameColumn)).toString() == QStringLiteral("MPI_Allreduce"));
    CHECK(colls.data(colls.index(0, TopItemsModel::CountColumn), SortRole).toLongLong() == 2);
    REQUIRE(files.rowCount() == int(f.analysis->topFiles.size()));
    CHECK(warnings.rowCount() == int(f.analysis->warnings.size()));

    REQUIRE(findings.rowCount() == int(f.analysis->findings.size()));
    for (int r = 0; r < findings.rowCount(); ++r) {
        const auto& fd = f.analysis->findings[size_t(r)];
        CHECK(findings.data(findings.index(r, FindingsModel::TitleColumn)).toString().toStdString() == fd.title);
        CHECK(findings.data(findings.index(r, 0), FindingsModel::RanksRole).toList().size() == int(fd.ranks.size()));
        CHECK(findings.data(findings.index(r, 0), FindingsModel::EventIdsRole).toList().size() == int(fd.eventIds.size()));
        CHECK(findings.data(findings.index(r, 0), FindingsModel::SuggestionRole).toString().toStdString() == fd.suggestion);
    }
}

TEST_CASE("event lookup resolves names and finds the launching API call and the collective's members", "[gui][details]") {
    Fixture f;
    // Find the kernel through a search (by name, regex) rather than by guessing ids.
    Filter k;
    k.text = QStringLiteral("^gemm_");
    k.regex = true;
    auto found = searchEvents(*f.data, k);
    REQUIRE(found.ok());
    REQUIRE(found->matches.size() == 1);
    auto d = lookupEvent(*f.data, found->matches[0].eventId);
    REQUIRE(d.ok());
    CHECK(d->name == QStringLiteral("gemm_kernel"));
    CHECK(d->className == QStringLiteral("compute"));
    CHECK(d->rank == 0);
    CHECK(d->ts == 410'000);
    CHECK(d->dur == 40'000);
    REQUIRE(d->related.size() == 1);
    CHECK(d->related[0].name == QStringLiteral("cudaLaunchKernel"));
    CHECK(d->related[0].relation == QStringLiteral("launched by"));
    CHECK(detailsHtml(*d).contains(QStringLiteral("event:%1").arg(d->related[0].eventId)));

    Filter c;
    c.text = QStringLiteral("allreduce");
    c.rankMin = 0;
    c.rankMax = 0;
    found = searchEvents(*f.data, c);
    REQUIRE(found.ok());
    REQUIRE(found->matches.size() == 1);
    d = lookupEvent(*f.data, found->matches[0].eventId);
    REQUIRE(d.ok());
    CHECK(d->bytes == (8 << 20));
    CHECK(d->communicator == QStringLiteral("world"));
    CHECK(d->seq == 0);
    REQUIRE(d->related.size() == 1);
    CHECK(d->related[0].rank == 1);
    CHECK(d->related[0].ts == 350'000);

    Filter io;
    io.text = QStringLiteral("read");
    found = searchEvents(*f.data, io);
    REQUIRE(found.ok());
    REQUIRE(found->matches.size() == 1);
    d = lookupEvent(*f.data, found->matches[0].eventId);
    REQUIRE(d.ok());
    CHECK(d->file == QStringLiteral("/data/in.bin"));
    CHECK(d->bytes == 4096);
}

TEST_CASE("search filters by class and rank range and reports bad regexes", "[gui][search]") {
    Fixture f;
    Filter io;
    io.classMask = 1u << unsigned(analyzer::EventClass::Io);
    auto r = searchEvents(*f.data, io);
    REQUIRE(r.ok());
    CHECK(r->total == 201);
    io.rankMin = 1;
    r = searchEvents(*f.data, io, 10);
    REQUIRE(r.ok());
    CHECK(r->total == 200);
    CHECK(r->matches.size() == 10);
    CHECK(r->truncated());
    CHECK(r->matches[0].ts == 600'000);
    CHECK(r->matches[9].ts == 609'000);
    Filter bad;
    bad.text = QStringLiteral("([");
    bad.regex = true;
    CHECK_FALSE(searchEvents(*f.data, bad).ok());
}

TEST_CASE("trace session answers on worker threads through signals", "[gui][session]") {
    Fixture f;
    TraceSession s;
    TraceDataPtr opened;
    AnalysisPtr analysis;
    QObject::connect(&s, &TraceSession::opened, [&](TraceDataPtr d) { opened = d; });
    QObject::connect(&s, &TraceSession::analysisReady, [&](AnalysisPtr a) { analysis = a; });
    s.open(QString::fromStdString(f.path));
    CHECK(opened == nullptr); // nothing answered synchronously
    REQUIRE(TraceSession::waitFor([&] { return analysis != nullptr; }, 60000));
    REQUIRE(opened);
    CHECK(opened->events == 209);
    CHECK(analysis->ranks.size() == 2);
    CHECK(analysis->summary.exclusive[int(analyzer::TimeClass::Io)] == f.analysis->summary.exclusive[int(analyzer::TimeClass::Io)]);

    AnalysisPtr range;
    QObject::connect(&s, &TraceSession::rangeTotalsReady, [&](TimeWindow, AnalysisPtr a) { range = a; });
    s.rangeTotals({500'000, 600'000}); // rank 0's read covers it
    REQUIRE(TraceSession::waitFor([&] { return range != nullptr; }, 60000));
    CHECK(range->summary.exclusive[int(analyzer::TimeClass::Io)] >= 100'000);

    QString failure;
    QObject::connect(&s, &TraceSession::openFailed, [&](const QString& m) { failure = m; });
    s.open(QString::fromStdString(f.dir / "missing.hpcprof"));
    REQUIRE(TraceSession::waitFor([&] { return !failure.isEmpty(); }, 10000));
    CHECK(failure.contains(QStringLiteral("missing.hpcprof")));
}
