// SPDX-License-Identifier: MIT
// hpcprof-gui as a user runs it: --screenshot renders the main window offscreen (whole run and a
// --window), damaged and foreign files fail with one line and a non-zero exit, and `hpcprof view`
// starts the GUI as a separate process; an OpenMP capture's waits, regions and finding reach the
// GUI's search, details and findings panel.
#include <QColor>
#include <QImage>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "hpcprof/analyzer/analyze.hpp"
#include "families/gpu/gpu_idle_section.hpp"
#include "models/class_colors.hpp"
#include "models/event_lookup.hpp"
#include "models/findings_model.hpp"
#include "models/gpu_models.hpp"
#include "models/lane_layout.hpp"
#include "models/search.hpp"
#include "models/severity_colors.hpp"
#include "models/timeline_fetch.hpp"
#include "models/trace_data.hpp"
#include "tests/unit/gui/gui_test_support.hpp"
#include "process_runner.hpp"

using namespace hpcprof;
using analyzer::EventClass;

namespace {
std::string guiBinary() { return HPCPROF_TEST_BUILD_DIR "/bin/hpcprof-gui"; }
const std::vector<std::string> kEnv = {"QT_QPA_PLATFORM=offscreen", "XDG_CONFIG_HOME=/tmp/hpcprof-gui-test-config"};

int countColor(const QImage& img, const QColor& c) {
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            if (img.pixelColor(x, y) == c) ++n;
    return n;
}

size_t lines(const std::string& s) {
    size_t n = 0;
    for (char ch : s) n += ch == '\n';
    return n;
}
} // namespace

TEST_CASE("screenshots show the trace's classes and zoom to --window", "[gui][integration]") {
    test::TempDir dir;
    test::writeClassesTrace(dir / "t.hpcprof");
    auto whole = test::runProcess({guiBinary(), "--screenshot", dir / "whole.png", "--size", "1200x800", dir / "t.hpcprof"}, kEnv);
    INFO(whole.err);
    REQUIRE(whole.exitCode == 0);
    QImage a(QString::fromStdString(dir / "whole.png"));
    REQUIRE(a.width() == 1200);
    REQUIRE(a.height() == 800);
    for (int c = 0; c < 5; ++c) {
        INFO("class " << c);
        CHECK(countColor(a, gui::classColor(EventClass(c))) > 200);
    }
    auto zoomed = test::runProcess(
        {guiBinary(), "--screenshot", dir / "zoom.png", "--size", "1200x800", "--window", "350us:450us", dir / "t.hpcprof"}, kEnv);
    INFO(zoomed.err);
    REQUIRE(zoomed.exitCode == 0);
    QImage b(QString::fromStdString(dir / "zoom.png"));
    REQUIRE(b.width() == 1200);
    // The copy [220, 280) us is outside the window: only the legend and minimap keep its colour;
    // the communication fills far more of the view than at the whole-run zoom.
    const QColor mem = gui::classColor(EventClass::Memory), comm = gui::classColor(EventClass::Communication);
    CHECK(countColor(b, mem) + 500 < countColor(a, mem));
    CHECK(countColor(b, comm) > countColor(a, comm) + 2000);
}

TEST_CASE("a screenshot of an analysis tab (option tab): the GPU idle view draws its cause bars", "[gui][integration][gpu]") {
    test::TempDir dir;
    test::writeClassesTrace(dir / "t.hpcprof");
    auto first = test::runProcess({guiBinary(), "--screenshot", dir / "first.png", "--size", "1200x800", dir / "t.hpcprof"}, kEnv);
    REQUIRE(first.exitCode == 0);
    auto idle = test::runProcess(
        {guiBinary(), "--screenshot", dir / "idle.png", "--size", "1200x800", "--tab", "GPU idle", dir / "t.hpcprof"}, kEnv);
    INFO(idle.err);
    REQUIRE(idle.exitCode == 0);
    // The host cause's colour is in the legend and fills the rank's bar only on the GPU idle tab.
    const QColor host = gui::gpuIdleCauseColor(int(analyzer::GpuIdleCause::Host));
    CHECK(countColor(QImage(QString::fromStdString(dir / "idle.png")), host) >
          countColor(QImage(QString::fromStdString(dir / "first.png")), host) + 500);
    auto none = test::runProcess({guiBinary(), "--screenshot", dir / "x.png", "--tab", "Nope", dir / "t.hpcprof"}, kEnv);
    CHECK(none.exitCode == 2);
    CHECK(none.err.find("no tab 'Nope'") != std::string::npos);
}

TEST_CASE("damaged and foreign files fail the screenshot with a one-line message", "[gui][integration]") {
    test::TempDir dir;
    test::writeClassesTrace(dir / "t.hpcprof");
    const auto size = std::filesystem::file_size(dir / "t.hpcprof");
    std::filesystem::copy_file(dir / "t.hpcprof", dir / "cut.hpcprof");
    std::filesystem::resize_file(dir / "cut.hpcprof", size / 3);
    std::ofstream(dir / "notes.hpcprof") << "this is not a trace\n";
    for (const std::string name : {"cut.hpcprof", "notes.hpcprof", "missing.hpcprof"}) {
        INFO(name);
        auto r = test::runProcess({guiBinary(), "--screenshot", dir / "out.png", dir / name}, kEnv);
        CHECK(r.exitCode == 2);
        CHECK(lines(r.err) == 1);
        CHECK(r.err.rfind("hpcprof-gui: cannot open " + (dir / name) + ": ", 0) == 0);
        CHECK_FALSE(std::filesystem::exists(dir / "out.png"));
    }
    auto bad = test::runProcess({guiBinary(), "--screenshot", dir / "out.png", "--window", "soon", dir / "t.hpcprof"}, kEnv);
    CHECK(bad.exitCode == 2);
    CHECK(lines(bad.err) == 1);
}

TEST_CASE("hpcprof view starts hpcprof-gui and passes its exit code through", "[gui][integration]") {
    test::TempDir dir;
    test::writeClassesTrace(dir / "t.hpcprof");
    auto r = test::runProcess({test::hpcprofBinary(), "view", dir / "t.hpcprof", "--screenshot", dir / "v.png"}, kEnv);
    INFO(r.err);
    CHECK(r.exitCode == 0);
    CHECK(std::filesystem::file_size(dir / "v.png") > 10000);
    auto broken = test::runProcess({test::hpcprofBinary(), "view", dir / "nothing.hpcprof", "--screenshot", dir / "w.png"}, kEnv);
    CHECK(broken.exitCode == 2);
    auto missing = test::runProcess({test::hpcprofBinary(), "view", dir / "t.hpcprof"},
                                    {"HPCPROF_GUI=" + (dir / "no-such-gui")});
    CHECK(missing.exitCode == 127);
    CHECK(missing.err.find("no-such-gui") != std::string::npos);
}

TEST_CASE("an OpenMP capture shows its barrier waits as sync and its imbalance as a finding", "[gui][integration][openmp]") {
    // The fixed capture of samples/openmp/omp_imbalance (tests/golden/raw): 2 threads, 5 regions.
    test::ensureGuiApp();
    test::TempDir dir;
    const std::string golden = HPCPROF_TEST_TESTS_DIR "/golden/raw/omp_imbalance.tar.gz";
    REQUIRE(test::runProcess({"tar", "-xzf", golden, "-C", dir.path().string()}).exitCode == 0);
    const std::string trace = dir / "t.hpcprof";
    auto m = test::runProcess({test::hpcprofBinary(), "merge", dir / "omp_imbalance.hpcprof.raw", "-o", trace});
    INFO(m.err);
    REQUIRE(m.exitCode == 0);
    auto rep = test::runProcess({test::hpcprofBinary(), "report", trace, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    const auto report = nlohmann::json::parse(rep.out);
    const auto& omp = report.at("openmp").at("ranks").at(0);

    auto data = gui::loadTraceData(trace);
    REQUIRE(data.ok());
    // Every barrier wait the report counts is a sync event the timeline draws and search finds.
    gui::Filter sync;
    sync.classMask = 1u << unsigned(EventClass::Sync);
    auto waits = gui::searchEvents(**data, sync);
    REQUIRE(waits.ok());
    REQUIRE_FALSE(waits->truncated());
    int64_t waitNs = 0;
    for (const auto& w : waits->matches) waitNs += w.dur;
    CHECK(waitNs == omp.at("wait_ns").get<int64_t>());
    // The regions are annotations, one per region on the primary thread.
    gui::Filter regions;
    regions.text = QStringLiteral("parallel");
    regions.classMask = 1u << unsigned(EventClass::Annotation);
    auto found = gui::searchEvents(**data, regions);
    REQUIRE(found.ok());
    CHECK(found->total >= omp.at("regions").get<int64_t>());

    // The findings panel lists the rule with the worst region as its evidence, and the details
    // of that event are the region's.
    auto t = analyzer::Trace::open(trace);
    REQUIRE(t.ok());
    auto a = analyzer::analyzeTrace(*t);
    REQUIRE(a.ok());
    gui::FindingsModel findings;
    findings.setAnalysis(std::make_shared<analyzer::Analysis>(std::move(*a)));
    int row = -1;
    for (int r = 0; r < findings.rowCount(); ++r)
        if (findings.data(findings.index(r, 0), gui::FindingsModel::IdRole).toString() == QStringLiteral("openmp-imbalance")) row = r;
    REQUIRE(row >= 0);
    const auto ids = findings.data(findings.index(row, 0), gui::FindingsModel::EventIdsRole).toList();
    const int64_t worst = omp.at("worst_region").at("event_id").get<int64_t>();
    CHECK(std::any_of(ids.begin(), ids.end(), [&](const QVariant& v) { return v.toLongLong() == worst; }));
    auto d = gui::lookupEvent(**data, worst);
    REQUIRE(d.ok());
    CHECK(d->dur == omp.at("worst_region").at("dur_ns").get<int64_t>());
    CHECK(d->className == QStringLiteral("annotation"));
}

namespace {
/// The id of the one event of the classes trace called `name` (search by name).
int64_t eventIdOf(const std::string& trace, const char* name) {
    auto data = gui::loadTraceData(trace);
    REQUIRE(data.ok());
    gui::Filter f;
    f.text = QString::fromLatin1(name);
    auto found = gui::searchEvents(**data, f);
    REQUIRE(found.ok());
    REQUIRE(found->matches.size() >= 1);
    return found->matches.front().eventId;
}
} // namespace

TEST_CASE("a screenshot with an event id opens zoomed around that event (unknown events and findings are errors)", "[gui][integration]") {
    test::ensureGuiApp();
    test::TempDir dir;
    test::writeClassesTrace(dir / "t.hpcprof");
    // The read of /data/in.bin, io at [500, 600) us on rank 0: the view is [400, 700) us.
    const int64_t read = eventIdOf(dir / "t.hpcprof", "read");
    auto whole = test::runProcess({guiBinary(), "--screenshot", dir / "whole.png", "--size", "1200x800", dir / "t.hpcprof"}, kEnv);
    REQUIRE(whole.exitCode == 0);
    auto at = test::runProcess({guiBinary(), "--screenshot", dir / "event.png", "--size", "1200x800", "--event",
                                std::to_string(read), dir / "t.hpcprof"},
                               kEnv);
    INFO(at.err);
    REQUIRE(at.exitCode == 0);
    QImage a(QString::fromStdString(dir / "whole.png")), b(QString::fromStdString(dir / "event.png"));
    const QColor io = gui::classColor(EventClass::Io), sync = gui::classColor(EventClass::Sync);
    // The read fills a third of the width instead of a tenth; the sync wait [700, 800) us is
    // outside the view: only the legend and the minimap keep its colour.
    CHECK(countColor(b, io) > countColor(a, io) + 2000);
    CHECK(countColor(b, sync) + 500 < countColor(a, sync));

    auto noEvent = test::runProcess({guiBinary(), "--screenshot", dir / "x.png", "--event", "987654", dir / "t.hpcprof"}, kEnv);
    CHECK(noEvent.exitCode == 2);
    CHECK(lines(noEvent.err) == 1);
    CHECK(noEvent.err.find("no event 987654 in this trace") != std::string::npos);
    auto noFinding = test::runProcess({guiBinary(), "--screenshot", dir / "x.png", "--finding", "nope", dir / "t.hpcprof"}, kEnv);
    CHECK(noFinding.exitCode == 2);
    CHECK(noFinding.err.find("no finding 'nope' in this trace") != std::string::npos);
    auto both = test::runProcess({guiBinary(), "--screenshot", dir / "x.png", "--finding", "a", "--event", "1", dir / "t.hpcprof"}, kEnv);
    CHECK(both.exitCode == 2);
    CHECK(both.err.find("exclude each other") != std::string::npos);
    auto badId = test::runProcess({guiBinary(), "--screenshot", dir / "x.png", "--event", "12ab", dir / "t.hpcprof"}, kEnv);
    CHECK(badId.exitCode == 2);
    CHECK(badId.err.find("bad --event '12ab'") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "x.png"));
}

TEST_CASE("a screenshot with a finding id opens at the finding's events with it selected", "[gui][integration][openmp]") {
    // The OpenMP capture's openmp-imbalance finding: its example event is the worst region.
    test::TempDir dir;
    const std::string golden = HPCPROF_TEST_TESTS_DIR "/golden/raw/omp_imbalance.tar.gz";
    REQUIRE(test::runProcess({"tar", "-xzf", golden, "-C", dir.path().string()}).exitCode == 0);
    const std::string trace = dir / "t.hpcprof";
    REQUIRE(test::runProcess({test::hpcprofBinary(), "merge", dir / "omp_imbalance.hpcprof.raw", "-o", trace}).exitCode == 0);
    auto whole = test::runProcess({guiBinary(), "--screenshot", dir / "whole.png", "--size", "1200x800", "--tab", "Findings", trace}, kEnv);
    REQUIRE(whole.exitCode == 0);
    auto at = test::runProcess(
        {guiBinary(), "--screenshot", dir / "finding.png", "--size", "1200x800", "--finding", "openmp-imbalance", trace}, kEnv);
    INFO(at.err);
    REQUIRE(at.exitCode == 0);
    // Selected in the findings list (the Findings tab is shown) and the timeline moved: the two
    // screenshots of the Findings tab differ (the selection, the finding's text, the zoom).
    QImage a(QString::fromStdString(dir / "whole.png")), b(QString::fromStdString(dir / "finding.png"));
    REQUIRE(a.size() == b.size());
    int differ = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) differ += a.pixel(x, y) != b.pixel(x, y);
    CHECK(differ > 5000);
}

TEST_CASE("hpcprof view passes --event and --finding to hpcprof-gui and refuses two at once", "[gui][integration][cli]") {
    test::TempDir dir;
    test::writeClassesTrace(dir / "t.hpcprof");
    // A stand-in GUI that writes its arguments, one a line.
    const std::string fake = dir / "fake-gui.sh";
    std::ofstream(fake) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" << (dir / "args.txt") << "'\n";
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    const std::vector<std::string> env = {"HPCPROF_GUI=" + fake};
    auto event = test::runProcess({test::hpcprofBinary(), "view", dir / "t.hpcprof", "--event", "42"}, env);
    INFO(event.err);
    CHECK(event.exitCode == 0);
    CHECK(test::readWholeFile(dir / "args.txt") == "--event\n42\n" + (dir / "t.hpcprof") + "\n");
    auto finding = test::runProcess({test::hpcprofBinary(), "view", dir / "t.hpcprof", "--finding", "load-imbalance"}, env);
    CHECK(finding.exitCode == 0);
    CHECK(test::readWholeFile(dir / "args.txt") == "--finding\nload-imbalance\n" + (dir / "t.hpcprof") + "\n");
    for (std::vector<std::string> bad : {std::vector<std::string>{"--event", "4", "--finding", "x"},
                                         {"--window", "1ms:2ms", "--event", "4"},
                                         {"--event", "many"},
                                         {"--event", "-3"}}) {
        INFO(bad[0] << " " << bad[1] << " " << bad[2 % bad.size()]);
        std::vector<std::string> args = {test::hpcprofBinary(), "view", dir / "t.hpcprof"};
        args.insert(args.end(), bad.begin(), bad.end());
        auto r = test::runProcess(args, env);
        CHECK(r.exitCode == 2);
    }
}

TEST_CASE("a real 2-rank MPI capture's CPU-time lanes never read more than one CPU per thread",
          "[gui][integration][counters][mpi]") {
    if (!HPCPROF_TEST_HAVE_MPI || test::runProcess({"sh", "-c", "command -v mpirun"}).exitCode != 0) {
        WARN("SKIPPED: no MPI");
        return;
    }
    test::TempDir dir;
    const std::vector<std::string> env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                          "OMPI_MCA_rmaps_base_oversubscribe=1"};
    auto run = test::runProcess({test::hpcprofBinary(), "run", "-q", "-o", dir / "t.hpcprof", "--counters",
                                 "task_clock,cpu_wait", "--", "mpirun", "-np", "2",
                                 HPCPROF_TEST_BUILD_DIR "/tests/counter_mpi_workload", "20", "10"},
                                env);
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    auto data = gui::loadTraceData(dir / "t.hpcprof");
    REQUIRE(data.ok());
    // What the counter lanes draw, at one bucket per sample interval and at a screen's width:
    // the interval arithmetic (merged to 1 ms, capped) and the GUI's wiring of the cap.
    gui::FetchRequest req;
    req.window = (*data)->bounds;
    int ranksWithClock = 0;
    for (const auto& c : (*data)->counters)
        if (c.name == QLatin1String("task_clock") || c.name == QLatin1String("cpu_wait")) {
            req.counters.push_back(c.id);
            ranksWithClock += c.name == QLatin1String("task_clock") && c.mainThread;
        }
    CHECK(ranksWithClock >= 2); // both ranks' main threads (mpirun's too)
    // By default one CPU-use lane per rank (task_clock with cpu_wait stacked above it), none on
    // mpirun.
    gui::LaneLayout layout;
    layout.build(**data);
    int rankGroups = 0;
    for (const auto& g : layout.groups()) {
        std::vector<const gui::Lane*> counterLanes;
        for (const auto& l : g.lanes)
            if (l.counter) counterLanes.push_back(&l);
        INFO(g.title.toStdString());
        if (!g.rank) {
            CHECK(counterLanes.empty());
            continue;
        }
        ++rankGroups;
        REQUIRE(counterLanes.size() == 1);
        const auto name = [&](int64_t id) {
            for (const auto& c : (*data)->counters)
                if (c.id == id) return c.name;
            return QString();
        };
        CHECK(name(counterLanes[0]->id) == QLatin1String("task_clock"));
        CHECK(name(counterLanes[0]->stackId) == QLatin1String("cpu_wait"));
    }
    CHECK(rankGroups == 2);
    for (int64_t resolution : {int64_t(1), req.window.span() / 1500 + 1}) {
        req.resolutionNs = resolution;
        auto drawn = gui::fetchTimeline(**data, req);
        REQUIRE(drawn.ok());
        size_t points = 0;
        for (const auto& [id, chart] : (*drawn)->counters)
            for (const auto& p : chart) {
                INFO("counter track " << id << " at " << p.ts << " ns, resolution " << resolution);
                CHECK(p.value <= 1e9);
                CHECK(p.value >= 0);
                ++points;
            }
        CHECK(points > 10);
    }
    // The lanes on demand (--counters, as View > Counters): other lanes than the default's; a
    // counter the trace does not have is an error.
    auto byDefault = test::runProcess({guiBinary(), "--screenshot", dir / "default.png", "--size", "1200x800", dir / "t.hpcprof"}, kEnv);
    auto chosen = test::runProcess({guiBinary(), "--screenshot", dir / "chosen.png", "--size", "1200x800", "--counters",
                                    "task_clock", dir / "t.hpcprof"},
                                   kEnv);
    INFO(chosen.err);
    REQUIRE(byDefault.exitCode == 0);
    REQUIRE(chosen.exitCode == 0);
    CHECK(QImage(QString::fromStdString(dir / "default.png")) != QImage(QString::fromStdString(dir / "chosen.png")));
    auto unknown = test::runProcess({guiBinary(), "--screenshot", dir / "x.png", "--counters", "PAPI_NOPE", dir / "t.hpcprof"}, kEnv);
    CHECK(unknown.exitCode == 2);
    CHECK(unknown.err.find("no counter 'PAPI_NOPE' in this trace") != std::string::npos);
}

namespace {
/// Pixels of colour `c` in the bottom `rows` rows of `img` (the status bar).
int countColorInBottom(const QImage& img, const QColor& c, int rows) {
    return countColor(img.copy(0, img.height() - rows, img.width(), rows), c);
}

/// The classes trace with one stat row added (severity info, data_loss or error).
std::string traceWithStat(test::TempDir& dir, const std::string& severity) {
    const std::string path = dir / (severity + ".hpcprof");
    test::writeClassesTrace(path);
    auto r = test::runProcess({"sqlite3", path, "INSERT INTO stats(name, severity, source, value, description) VALUES"
                                                " ('counters_unavailable', '" + severity + "', 'capture', 12, 'not counted')"});
    REQUIRE(r.exitCode == 0);
    return path;
}
} // namespace

TEST_CASE("an info-only data-quality note is not painted as a warning but data loss and errors are",
          "[gui][integration][severity]") {
    if (test::runProcess({"sh", "-c", "command -v sqlite3"}).exitCode != 0) {
        WARN("SKIPPED: no sqlite3 command");
        return;
    }
    test::TempDir dir;
    const QColor info = gui::severityColor(analyzer::Severity::Info),
                 warning = gui::severityColor(analyzer::Severity::Warning),
                 critical = gui::severityColor(analyzer::Severity::Critical);
    QImage shot[3];
    const char* severities[3] = {"info", "data_loss", "error"};
    for (int i = 0; i < 3; ++i) {
        const std::string trace = traceWithStat(dir, severities[i]);
        const std::string png = dir / (std::string(severities[i]) + ".png");
        auto r = test::runProcess({guiBinary(), "--screenshot", png, "--size", "1200x800", trace}, kEnv);
        INFO(r.err);
        REQUIRE(r.exitCode == 0);
        shot[i] = QImage(QString::fromStdString(png));
    }
    // Info: no banner, the status-bar note in the info colour, nothing amber or red there.
    CHECK(countColor(shot[0], warning) == 0);
    CHECK(countColor(shot[0], critical) == 0);
    CHECK(countColorInBottom(shot[0], info, 30) > 20);
    // Data loss: an amber banner (a full-width bar) and an amber status-bar count, no red.
    CHECK(countColor(shot[1], warning) > 5000);
    CHECK(countColorInBottom(shot[1], warning, 30) > 20);
    CHECK(countColor(shot[1], critical) == 0);
    // An error of the capture: red.
    CHECK(countColor(shot[2], critical) > 5000);
    CHECK(countColor(shot[2], warning) == 0);
}
