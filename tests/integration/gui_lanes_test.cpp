// SPDX-License-Identifier: MIT
// The timeline's first screen through `hpcprof-gui --screenshot`, on generated traces whose
// answer is known: each rank's rows show its share of compute (honest pixels), and 64 ranks all
// fit the first screenshot at the default size (their summary rows shrink to a heat map), and so do
// 1,024 (several ranks to a pixel row).
#include <QColor>
#include <QImage>
#include <catch2/catch.hpp>

#include <map>

#include "models/class_colors.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using analyzer::TimeClass;
using schema::Category;

namespace {
std::string guiBinary() { return HPCPROF_TEST_BUILD_DIR "/bin/hpcprof-gui"; }
const std::vector<std::string> kEnv = {"QT_QPA_PLATFORM=offscreen", "XDG_CONFIG_HOME=/tmp/hpcprof-gui-test-config"};
const QColor kHeader(0xe3, 0xe8, 0xee); // a group header's gutter

/// Rows of the image whose left edge shows a group header (the lanes' gutter).
std::vector<int> headerRows(const QImage& img) {
    std::vector<int> rows;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < 30; ++x)
            if (img.pixelColor(x, y) == kHeader) {
                rows.push_back(y);
                break;
            }
    return rows;
}

/// First row of each run of consecutive header rows: where each group starts.
std::vector<int> groupStarts(const std::vector<int>& rows) {
    std::vector<int> starts;
    for (size_t i = 0; i < rows.size(); ++i)
        if (i == 0 || rows[i] != rows[i - 1] + 1) starts.push_back(rows[i]);
    return starts;
}

QImage screenshot(const test::TempDir& dir, const std::string& name) {
    auto r = test::runProcess({guiBinary(), "--screenshot", dir / (name + ".png"), dir / (name + ".hpcprof")}, kEnv);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    return QImage(QString::fromStdString(dir / (name + ".png")));
}
} // namespace

TEST_CASE("honest pixels: each rank's rows are as compute-coloured as the rank computes", "[gui][integration][lanes]") {
    // 4 ranks over 10 ms, 100 periods of 100 us: the main thread computes, then waits in
    // MPI_Allreduce for the rest of the period; rank 2 computes 60 %, the others 30 %.
    test::TraceBuilder b;
    for (int r = 0; r < 4; ++r) {
        const int t = b.rank(r, 0, 10'000'000, 4);
        const int64_t compute = r == 2 ? 60'000 : 30'000;
        for (int i = 0; i < 100; ++i)
            b.event(t, Category::MpiCollective, "MPI_Allreduce", 100'000 * i + compute, 100'000 - compute)
                .collective("world", 4, i);
    }
    test::TempDir dir;
    b.write(dir / "mix.hpcprof");
    const QImage img = screenshot(dir, "mix");
    const std::vector<int> starts = groupStarts(headerRows(img));
    REQUIRE(starts.size() == 4);
    const QRgb green = gui::timeClassColor(TimeClass::Compute).rgb(), red = gui::timeClassColor(TimeClass::Communication).rgb();
    const int groupHeight = starts[1] - starts[0];
    for (int r = 0; r < 4; ++r) {
        int64_t compute = 0, comm = 0;
        for (int y = starts[size_t(r)]; y < starts[size_t(r)] + groupHeight; ++y)
            for (int x = 0; x < img.width(); ++x) {
                const QRgb p = img.pixel(x, y) & 0xffffff;
                compute += p == (green & 0xffffff);
                comm += p == (red & 0xffffff);
            }
        INFO("rank " << r << ": compute " << compute << " px, comm " << comm << " px");
        REQUIRE(compute + comm > 10'000);
        const double share = double(compute) / double(compute + comm);
        CHECK(share == Approx(r == 2 ? 0.60 : 0.30).margin(0.05));
    }
}

TEST_CASE("every rank on the first screen: 64 ranks in one default-size screenshot", "[gui][integration][lanes]") {
    // Even ranks compute all the time, odd ranks wait in one long MPI_Recv: their summary rows
    // alternate green and red, one band per rank.
    test::TraceBuilder b;
    for (int r = 0; r < 64; ++r) {
        const int t = b.rank(r, 0, 1'000'000, 64);
        b.thread(t, 100'000 + r); // a second lane per rank: expanded, they would not fit
        if (r % 2) b.event(t, Category::MpiP2p, "MPI_Recv", 0, 1'000'000).withPeer(r - 1);
    }
    test::TempDir dir;
    b.write(dir / "wide.hpcprof");
    const QImage img = screenshot(dir, "wide");
    const std::vector<int> rows = headerRows(img);
    REQUIRE(!rows.empty());
    const QRgb green = gui::timeClassColor(TimeClass::Compute).rgb() & 0xffffff;
    const QRgb red = gui::timeClassColor(TimeClass::Communication).rgb() & 0xffffff;
    // Down the middle of the time area, between the first and the last summary row.
    const int x = img.width() / 2 + 80;
    std::vector<QRgb> bands;
    for (int y = rows.front(); y <= rows.back(); ++y) {
        const QRgb p = img.pixel(x, y) & 0xffffff;
        if ((p == green || p == red) && (bands.empty() || bands.back() != p)) bands.push_back(p);
    }
    REQUIRE(bands.size() == 64);
    for (size_t r = 0; r < bands.size(); ++r) CHECK(bands[r] == (r % 2 ? red : green));
}

TEST_CASE("every rank on the first screen: 1,024 ranks share pixel rows, a straggler shows in its row",
          "[gui][integration][lanes]") {
    // Every rank but 700 waits in one long MPI_Recv; rank 700 computes all the time. The
    // timeline has fewer pixel rows than ranks, so each row holds k consecutive ranks and shows
    // their mean: red everywhere but the row of rank 700, which is a mix with green.
    constexpr int kRanks = 1024, kStraggler = 700;
    test::TraceBuilder b;
    for (int r = 0; r < kRanks; ++r) {
        const int t = b.rank(r, 0, 1'000'000, kRanks);
        if (r != kStraggler) b.event(t, Category::MpiP2p, "MPI_Recv", 0, 1'000'000).withPeer((r + 1) % kRanks);
    }
    test::TempDir dir;
    b.write(dir / "big.hpcprof");
    const QImage img = screenshot(dir, "big");
    REQUIRE(img.size() == QSize(1600, 1000)); // the default size
    const std::vector<int> rows = headerRows(img);
    REQUIRE(rows.size() > 100);
    REQUIRE(int(rows.size()) < kRanks);
    CHECK(rows.back() - rows.front() + 1 == int(rows.size())); // one block: no row scrolled away
    // k: the fewest ranks per row that fit the rows on screen.
    int k = (kRanks + int(rows.size()) - 1) / int(rows.size());
    REQUIRE((kRanks + k - 1) / k == int(rows.size()));
    const QRgb red = gui::timeClassColor(TimeClass::Communication).rgb() & 0xffffff;
    const QRgb green = gui::timeClassColor(TimeClass::Compute).rgb() & 0xffffff;
    const int x = img.width() / 2 + 80;
    std::vector<int> notRed;
    for (int y : rows)
        if ((img.pixel(x, y) & 0xffffff) != red) notRed.push_back(y);
    INFO("rows " << rows.size() << ", ranks per row " << k);
    REQUIRE(notRed.size() == 1);
    CHECK(notRed[0] == rows.front() + kStraggler / k);
    // The mean of one green and k - 1 red ranks.
    const QColor mix(img.pixel(x, notRed[0]));
    const auto mean = [&](int g, int r) { return (g + (k - 1) * r) / double(k); };
    CHECK(mix.green() == Approx(mean(qGreen(green), qGreen(red))).margin(1.0));
    CHECK(mix.red() == Approx(mean(qRed(green), qRed(red))).margin(1.0));
}
