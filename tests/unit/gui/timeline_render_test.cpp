// SPDX-License-Identifier: MIT
// Renders the known "classes" trace to an image and checks, pixel by pixel, that every class
// shows in its colour where its times say, at the whole-run zoom and zoomed in; and that the
// asynchronous fetcher delivers the same draw lists without the caller running a query.
#include <QImage>
#include <QPainter>
#include <QThread>
#include <catch2/catch.hpp>

#include "gui_test_support.hpp"
#include "models/class_colors.hpp"
#include "models/severity_colors.hpp"
#include "models/timeline_fetcher.hpp"
#include "models/timeline_painter.hpp"
#include "process_runner.hpp"

using namespace hpcprof;
using namespace hpcprof::gui;
using analyzer::EventClass;

namespace {
constexpr int kWidth = 1000 + TimelinePainter::kGutter;
constexpr int kHeight = 300;

struct Scene {
    test::TempDir dir;
    TraceDataPtr data;
    LaneLayout layout;
    TimeAxis axis;
    TimelineDataPtr timeline;
    QImage image{kWidth, kHeight, QImage::Format_RGB32};

    Scene() {
        test::ensureGuiApp();
        test::writeClassesTrace(dir / "classes.hpcprof");
        auto d = loadTraceData(dir / "classes.hpcprof");
        REQUIRE(d.ok());
        data = *d;
        layout.build(*data);
        axis.setBounds(data->bounds);
        axis.setWidth(1000);
    }
    /// Fetches (this thread's own connection, as a worker would) and paints `w`.
    void render(TimeWindow w) {
        axis.setWindow(w);
        FetchRequest req;
        req.window = w;
        req.resolutionNs = quantizedResolution(axis.nsPerPixel());
        req.tracks = layout.visibleTracks(0, 10000);
        auto r = fetchTimeline(*data, req);
        REQUIRE(r.ok());
        timeline = *r;
        for (const auto& [track, draw] : timeline->tracks) layout.growRows(track, draw->maxDepth + 1);
        paint();
    }
    void paint(const PaintState& st = PaintState{}) {
        image.fill(Qt::white);
        QPainter p(&image);
        TimelinePainter::paintLanes(p, QRect(0, 0, kWidth, kHeight), axis, layout, *data, timeline.get(), st);
    }
    /// Colour at time `t`, near the top on row `depth` of the lane of track `trackId`.
    QColor at(int64_t trackId, int depth, int64_t t) const {
        const Lane* lane = layout.laneOfTrack(trackId);
        REQUIRE(lane);
        const int x = TimelinePainter::kGutter + int(axis.timeToPixel(t));
        const int y = lane->y + depth * LaneLayout::kRowHeight + 2; // above any label text
        return image.pixelColor(x, y);
    }
};

// Track ids in the order the builder writes them: rank 0 main, rank 0 GPU stream, rank 1 main.
constexpr int64_t kMain0 = 1, kGpu0 = 2, kMain1 = 3;
} // namespace

TEST_CASE("every class is drawn in its colour at its time at the whole-run zoom", "[gui][render]") {
    Scene s;
    s.render(s.data->bounds);
    REQUIRE(s.layout.laneOfTrack(kMain0)->rows == 2);
    // 1 us per pixel: probe inside each event, left of where a label would start.
    CHECK(s.at(kMain0, 0, 850'000) == classColor(EventClass::Annotation)); // right of its label
    CHECK(s.at(kMain0, 1, 110'000) == classColor(EventClass::Compute));
    CHECK(s.at(kMain0, 1, 310'000) == classColor(EventClass::Communication));
    CHECK(s.at(kMain0, 1, 510'000) == classColor(EventClass::Io));
    CHECK(s.at(kMain0, 1, 710'000) == classColor(EventClass::Sync));
    CHECK(s.at(kGpu0, 0, 225'000) == classColor(EventClass::Memory));
    CHECK(s.at(kGpu0, 0, 420'000) == classColor(EventClass::Compute));
    CHECK(s.at(kMain1, 0, 355'000) == classColor(EventClass::Communication));
    // Gaps are background, not a class colour.
    const QColor bg = s.at(kMain0, 1, 250'000);
    CHECK(bg != classColor(EventClass::Compute));
    CHECK(bg != classColor(EventClass::Communication));
    CHECK(s.at(kGpu0, 0, 350'000) == bg);
    CHECK(s.at(kMain0, 0, 950'000) == bg);
    // Rank 1's 200 writes of 100 ns (0.1 px each) fold into io marks instead of vanishing.
    const auto& writes = *s.timeline->tracks.at(kMain1);
    size_t folded = 0;
    for (const auto& d : writes.items) folded += d.folded ? 1 : 0;
    CHECK(folded > 0);
    CHECK(writes.items.size() < 201);
    CHECK(s.at(kMain1, 0, 700'000) == classColor(EventClass::Io));
    // Rank 1 is a CPU rank: its main thread computes outside its calls (docs/analysis.md), and
    // its first row says so; rank 0 has a GPU, so its main thread's gaps stay empty.
    CHECK(s.at(kMain1, 0, 850'000) == classColor(EventClass::Compute));
    CHECK(s.at(kMain1, 0, 200'000) == classColor(EventClass::Compute));
}

TEST_CASE("zoomed in, events move and grow to their new pixel positions", "[gui][render]") {
    Scene s;
    // 100 ns per pixel over [350 us, 450 us): the communication ends at 400 us = pixel 500.
    s.render({350'000, 450'000});
    CHECK(s.axis.timeToPixel(400'000) == 500.0);
    CHECK(s.at(kMain0, 1, 351'000) == classColor(EventClass::Communication));
    CHECK(s.at(kMain0, 1, 399'000) == classColor(EventClass::Communication));
    CHECK(s.at(kMain0, 1, 401'000) != classColor(EventClass::Communication));
    CHECK(s.at(kMain0, 1, 404'000) == classColor(EventClass::Annotation)); // the 4 us launch: 40 px
    CHECK(s.at(kGpu0, 0, 411'000) == classColor(EventClass::Compute));
    CHECK(s.at(kGpu0, 0, 449'000) == classColor(EventClass::Compute));
    CHECK(s.at(kGpu0, 0, 405'000) != classColor(EventClass::Compute));
    CHECK(s.at(kMain1, 0, 360'000) == classColor(EventClass::Communication));
    CHECK(s.at(kMain1, 0, 420'000) == classColor(EventClass::Compute)); // zoomed past the mipmap too
    // Out of view at this zoom: the compute range [100, 200) us and the copy are not drawn.
    CHECK(s.timeline->tracks.at(kGpu0)->items.size() == 1);

    // Individual 100 ns writes at 600 us + k us become visible as separate marks at 10 ns/px.
    s.render({600'000, 610'000});
    CHECK(s.at(kMain1, 0, 600'050) == classColor(EventClass::Io));
    CHECK(s.at(kMain1, 0, 601'050) == classColor(EventClass::Io));
    CHECK(s.at(kMain1, 0, 600'500) != classColor(EventClass::Io));
    for (const auto& d : s.timeline->tracks.at(kMain1)->items) CHECK_FALSE(d.folded);
}

TEST_CASE("the fetcher delivers draw lists from a worker thread through a signal", "[gui][render]") {
    Scene s;
    TimelineFetcher fetcher;
    fetcher.setTrace(s.data);
    int ready = 0;
    QObject::connect(&fetcher, &TimelineFetcher::dataReady, [&] { ++ready; });
    REQUIRE(fetcher.request(s.data->bounds, 1000.0, s.layout.visibleTracks(0, 1000), {}));
    CHECK(fetcher.busy());
    CHECK(fetcher.data() == nullptr); // nothing computed on the calling thread
    REQUIRE(fetcher.waitUntilIdle(20000));
    CHECK(ready == 1);
    REQUIRE(fetcher.data());
    CHECK(fetcher.data()->tracks.size() == 3);
    CHECK(fetcher.data()->resolutionNs == 4096);
    // A pan inside the 3x fetched window and a zoom at the same resolution need no new fetch.
    CHECK_FALSE(fetcher.request({0, 1'000'000}, 1000.0, s.layout.visibleTracks(0, 1000), {}));
    CHECK_FALSE(fetcher.request({100'000, 900'000}, 900.0, s.layout.visibleTracks(0, 1000), {}));
    // A deep zoom does.
    CHECK(fetcher.request({400'000, 401'000}, 1.0, s.layout.visibleTracks(0, 1000), {}));
    REQUIRE(fetcher.waitUntilIdle(20000));
    CHECK(ready == 2);
    CHECK(fetcher.data()->resolutionNs == 4);
}

TEST_CASE("the active finding's ranks are marked in its severity's colour", "[gui][render]") {
    Scene s;
    s.render(s.data->bounds);
    const int y1 = s.layout.groups()[1].y + LaneLayout::kHeaderHeight / 2; // rank 1's header
    const int y0 = s.layout.groups()[0].y + LaneLayout::kHeaderHeight / 2;
    const QColor plain = s.image.pixelColor(1, y0);
    for (auto sev : {analyzer::Severity::Info, analyzer::Severity::Warning, analyzer::Severity::Critical}) {
        PaintState st;
        st.highlightedRanks = {1};
        st.highlightSeverity = sev;
        s.paint(st);
        INFO("severity " << analyzer::severityName(sev));
        CHECK(s.image.pixelColor(1, y1) == severityColor(sev));  // the bar at the gutter's edge
        CHECK(s.image.pixelColor(40, y1 - 8) == severityTint(sev)); // the gutter, above the title
        CHECK(s.image.pixelColor(1, y0) == plain);                 // rank 0 is not the finding's
    }
    CHECK(severityTint(analyzer::Severity::Info) != severityTint(analyzer::Severity::Critical));
    CHECK(severityTint(analyzer::Severity::Critical) == QColor(0xeb, 0xb4, 0xb4));
}
