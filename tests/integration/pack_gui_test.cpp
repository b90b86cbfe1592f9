// SPDX-License-Identifier: MIT
// The GUI on packed traces (issue 25): one real run's trace, plain and in both packed forms,
// opened as hpcprof-gui opens it (TraceSession on its worker threads), gives the same trace
// data, the same cells in every analysis model and in the lanes, the same timeline draw lists,
// search results and event details; and hpcprof-gui draws the same screenshot of each.
#include <QAbstractItemModel>
#include <QDebug>
#include <QImage>
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "tests/unit/gui/gui_test_support.hpp"
#include "models/analysis_models.hpp"
#include "models/event_lookup.hpp"
#include "models/findings_model.hpp"
#include "models/gpu_models.hpp"
#include "models/lane_layout.hpp"
#include "models/lane_model.hpp"
#include "models/search.hpp"
#include "models/timeline_fetch.hpp"
#include "models/trace_session.hpp"
#include "pack_twins.hpp"
#include "process_runner.hpp"

using namespace hpcprof;
using namespace hpcprof::gui;

namespace {

/// A value as text, whatever its type (lists, colours, numbers): QDebug's form.
std::string text(const QVariant& v) {
    QString s;
    QDebug(&s).nospace() << v;
    return s.toStdString();
}

/// Every header and cell of `m` (the tree depth first) in the roles the views and the tests read:
/// the standard ones and the models' own (Qt::UserRole ..+ 20). One line per non-empty value.
void cellsOf(const QAbstractItemModel& m, const QModelIndex& parent, std::vector<std::string>& out) {
    static const std::vector<int> kRoles = [] {
        std::vector<int> roles = {Qt::DisplayRole, Qt::ToolTipRole, Qt::ForegroundRole,
                                  Qt::BackgroundRole, Qt::DecorationRole, Qt::TextAlignmentRole};
        for (int r = Qt::UserRole; r <= Qt::UserRole + 20; ++r) roles.push_back(r);
        return roles;
    }();
    for (int r = 0; r < m.rowCount(parent); ++r) {
        for (int c = 0; c < m.columnCount(parent); ++c) {
            const QModelIndex i = m.index(r, c, parent);
            for (int role : kRoles) {
                const QVariant v = m.data(i, role);
                if (v.isValid()) out.push_back(std::to_string(r) + "," + std::to_string(c) + "@" + std::to_string(role) + " " + text(v));
            }
        }
        cellsOf(m, m.index(r, 0, parent), out);
    }
}

std::vector<std::string> cellsOf(const QAbstractItemModel& m) {
    std::vector<std::string> out;
    for (int c = 0; c < m.columnCount(); ++c) out.push_back(text(m.headerData(c, Qt::Horizontal)));
    cellsOf(m, {}, out);
    return out;
}

/// What the GUI shows of one trace, as comparable text: named parts, each a list of lines.
using Shown = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// The trace data the GUI loads first: ranks, events, bounds, processes, tracks, counters, stats.
std::vector<std::string> traceDataOf(const TraceData& d) {
    std::vector<std::string> out = {std::to_string(d.rankCount) + " ranks, " + std::to_string(d.events) + " events, [" +
                                    std::to_string(d.bounds.begin) + ", " + std::to_string(d.bounds.end) + ")"};
    for (const auto& p : d.index.processes())
        out.push_back("process " + std::to_string(p.id) + " rank " + std::to_string(p.rank.value_or(-1)) + " pid " +
                      std::to_string(p.pid) + " " + p.command + " [" + std::to_string(p.startTs) + ", " +
                      std::to_string(p.endTs.value_or(-1)) + ")");
    for (const auto& t : d.index.tracks())
        out.push_back("track " + std::to_string(t.id) + " of " + std::to_string(t.processId) + " " + t.name + ": " +
                      std::to_string(t.eventCount) + " events, " + std::to_string(t.firstEventId.value_or(-1)) + ".." +
                      std::to_string(t.lastEventId.value_or(-1)));
    for (const auto& c : d.counters)
        out.push_back("counter " + std::to_string(c.id) + " " + c.name.toStdString() + " " + c.unit.toStdString());
    for (const auto& s : d.stats)
        out.push_back("stat " + s.name.toStdString() + " " + s.severity.toStdString() + " " + std::to_string(s.value));
    return out;
}

/// The timeline's draw lists of the whole run at about 2000 pixels: every track, counter and
/// summary row.
std::vector<std::string> timelineOf(const TraceData& d) {
    FetchRequest req;
    req.window = d.bounds;
    req.resolutionNs = quantizedResolution(double(d.bounds.span()) / 2000.0);
    for (const auto& t : d.index.tracks()) req.tracks.push_back(t.id);
    for (const auto& c : d.counters) req.counters.push_back(c.id);
    for (const auto& p : d.index.processes()) req.groups.push_back(p.id);
    auto f = fetchTimeline(d, req);
    REQUIRE(f.ok());
    std::vector<std::string> out = {std::to_string((*f)->items) + " items"};
    for (int64_t id : req.tracks) {
        const auto it = (*f)->tracks.find(id);
        if (it == (*f)->tracks.end()) continue;
        const TrackDraw& t = *it->second;
        out.push_back("track " + std::to_string(id) + " depth " + std::to_string(t.maxDepth) + " longest " + std::to_string(t.maxDur));
        for (const DrawItem& i : t.items)
            out.push_back(std::to_string(i.ts) + "+" + std::to_string(i.dur) + " e" + std::to_string(i.eventId) + " n" +
                          std::to_string(i.nameId) + " d" + std::to_string(i.depth) + " x" + std::to_string(i.count) + " c" +
                          std::to_string(i.cls) + (i.folded ? " folded" : ""));
        if (t.shares) out.push_back("shares " + std::to_string(t.shares->buckets) + " " + std::string(t.shares->share.begin(), t.shares->share.end()));
    }
    for (int64_t id : req.counters) {
        const auto it = (*f)->counters.find(id);
        if (it == (*f)->counters.end()) continue;
        for (const auto& p : it->second) out.push_back("counter " + std::to_string(id) + " " + std::to_string(p.ts) + " " + std::to_string(p.value));
    }
    for (int64_t id : req.groups) {
        const auto it = (*f)->groups.find(id);
        if (it == (*f)->groups.end() || !it->second) continue;
        out.push_back("group " + std::to_string(id) + " " + std::to_string(it->second->begin) + "/" + std::to_string(it->second->bucketNs) +
                      " " + std::string(it->second->share.begin(), it->second->share.end()));
    }
    return out;
}

/// Search (every event, then by name) and the details of the first 200 events found.
std::vector<std::string> searchAndDetailsOf(const TraceData& d) {
    std::vector<std::string> out;
    Filter all;
    auto found = searchEvents(d, all);
    REQUIRE(found.ok());
    out.push_back(std::to_string(found->total) + " events found");
    for (const auto& m : found->matches)
        out.push_back(std::to_string(m.eventId) + " " + std::to_string(m.trackId) + " " + std::to_string(m.ts) + "+" + std::to_string(m.dur));
    Filter byName;
    byName.text = QStringLiteral("MPI_");
    auto mpi = searchEvents(d, byName);
    REQUIRE(mpi.ok());
    out.push_back(std::to_string(mpi->total) + " MPI_ calls");
    for (size_t i = 0; i < found->matches.size() && i < 200; ++i) {
        auto e = lookupEvent(d, found->matches[i].eventId);
        REQUIRE(e.ok());
        out.push_back(detailsHtml(*e).toStdString());
    }
    return out;
}

/// Everything the GUI shows of `path`, opened as hpcprof-gui opens it.
Shown shownOf(const std::string& path) {
    test::ensureGuiApp();
    TraceSession session;
    session.open(path);
    REQUIRE(TraceSession::waitFor([&] { return session.analysis() != nullptr; }, 120000));
    const TraceDataPtr data = session.data();
    const AnalysisPtr a = session.analysis();
    REQUIRE(data);
    Shown shown = {{"trace data", traceDataOf(*data)}};
    LaneLayout layout;
    layout.build(*data);
    LaneModel lanes;
    lanes.setTrace(data, layout);
    shown.push_back({"lanes", cellsOf(lanes)});
    std::vector<std::pair<std::string, std::unique_ptr<AnalysisTableModel>>> tables;
    tables.emplace_back("breakdown", std::make_unique<BreakdownModel>());
    tables.emplace_back("pop", std::make_unique<PopModel>());
    tables.emplace_back("top kernels", std::make_unique<TopItemsModel>(TopItemsModel::Kind::Kernels));
    tables.emplace_back("top collectives", std::make_unique<TopItemsModel>(TopItemsModel::Kind::Collectives));
    tables.emplace_back("top files", std::make_unique<TopItemsModel>(TopItemsModel::Kind::Files));
    tables.emplace_back("warnings", std::make_unique<WarningsModel>());
    tables.emplace_back("gpu idle", std::make_unique<GpuIdleModel>());
    for (auto& [name, model] : tables) {
        model->setAnalysis(a);
        shown.push_back({name, cellsOf(*model)});
    }
    KernelStatsModel kernels;
    kernels.setAnalysis(a);
    GpuGapsModel gaps;
    gaps.setAnalysis(a);
    StepsModel steps;
    steps.setAnalysis(a);
    FindingsModel findings;
    findings.setAnalysis(a);
    shown.push_back({"kernels", cellsOf(kernels)});
    shown.push_back({"gpu gaps", cellsOf(gaps)});
    shown.push_back({"steps", cellsOf(steps)});
    shown.back().second.push_back(steps.summaryText().toStdString());
    shown.push_back({"findings", cellsOf(findings)});
    shown.push_back({"timeline", timelineOf(*data)});
    shown.push_back({"search", searchAndDetailsOf(*data)});
    return shown;
}

/// The number of lines of part `name` of `s`.
size_t linesOf(const Shown& s, const std::string& name) {
    for (const auto& [n, lines] : s)
        if (n == name) return lines.size();
    return 0;
}

} // namespace

TEST_CASE("the GUI shows the same on a packed real run as on the plain trace: trace data, every "
          "model, the timeline, search, details and the screenshot", "[gui][integration][pack]") {
    test::TempDir dir;
    const test::PackTwins t = test::makePackTwins(dir, "run");
    const Shown plain = shownOf(t.plain);
    // Not empty: the run's ranks, lanes, breakdown rows, findings, drawn items and events.
    CHECK(linesOf(plain, "trace data") > 4);
    CHECK(linesOf(plain, "lanes") > 10);
    CHECK(linesOf(plain, "breakdown") > 10);
    CHECK(linesOf(plain, "findings") > 1);
    CHECK(linesOf(plain, "timeline") > 20);
    CHECK(linesOf(plain, "search") > 50);
    for (const std::string& packed : {t.columns, t.whole}) {
        INFO(packed);
        const Shown other = shownOf(packed);
        REQUIRE(other.size() == plain.size());
        for (size_t i = 0; i < plain.size(); ++i) {
            INFO(plain[i].first);
            CHECK(other[i].second == plain[i].second);
        }
    }

    // hpcprof-gui itself, offscreen: the same pixels.
    const std::vector<std::string> env = {"QT_QPA_PLATFORM=offscreen", "XDG_CONFIG_HOME=" + (dir / "config")};
    auto shot = [&](const std::string& trace, const std::string& png) {
        auto r = test::runProcess({HPCPROF_TEST_BUILD_DIR "/bin/hpcprof-gui", "--screenshot", png, "--size",
                                   "1200x800", trace}, env);
        INFO(r.err);
        REQUIRE(r.exitCode == 0);
        QImage img(QString::fromStdString(png));
        REQUIRE(img.width() == 1200);
        return img;
    };
    const QImage base = shot(t.plain, dir / "plain.png");
    CHECK(shot(t.columns, dir / "columns.png") == base);
    CHECK(shot(t.whole, dir / "whole.png") == base);
}
