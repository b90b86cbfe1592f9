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
#include "models/search.hpp"
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
