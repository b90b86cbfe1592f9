// SPDX-License-Identifier: MIT
// Time <-> pixel mapping, zoom and pan limits, and the zoom history (back/forward).
#include <QSignalSpy>
#include <catch2/catch.hpp>

#include "gui_test_support.hpp"
#include "models/time_axis.hpp"
#include "models/timeline_fetch.hpp"
#include "models/timeline_painter.hpp"
#include "models/zoom_stack.hpp"

using namespace hpcprof::gui;
using hpcprof::test::ensureGuiApp;

TEST_CASE("time axis maps times to pixels and back linearly", "[gui][axis]") {
    TimeAxis a;
    a.setBounds({1'000, 1'001'000});
    a.setWidth(1000);
    CHECK(a.nsPerPixel() == 1000.0);
    CHECK(a.timeToPixel(1'000) == 0.0);
    CHECK(a.timeToPixel(501'000) == 500.0);
    CHECK(a.timeToPixel(1'001'000) == 1000.0);
    CHECK(a.pixelToTime(250) == 251'000);
    a.setWindow({101'000, 201'000});
    CHECK(a.nsPerPixel() == 100.0);
    CHECK(a.timeToPixel(151'000) == 500.0);
    CHECK(a.pixelToTime(500) == 151'000);
    CHECK(a.timeToPixel(91'000) == -100.0); // left of the view: negative
}

TEST_CASE("zooming keeps the time under the anchor pixel in place", "[gui][axis]") {
    TimeAxis a;
    a.setBounds({0, 1'000'000});
    a.setWidth(800);
    const int64_t before = a.pixelToTime(200);
    a.zoom(0.5, 200);
    CHECK(a.window().span() == 500'000);
    CHECK(a.pixelToTime(200) == before);
    a.zoom(0.1, 600);
    CHECK(a.window().span() == 50'000);
    // Zooming out past the whole trace stops at the bounds.
    a.zoom(1000, 400);
    CHECK(a.window() == TimeWindow{0, 1'000'000});
    // Zooming in stops at the minimum span.
    for (int i = 0; i < 100; ++i) a.zoom(0.5, 400);
    CHECK(a.window().span() == TimeAxis::kMinSpanNs);
}

TEST_CASE("panning and set windows stay inside the trace bounds", "[gui][axis]") {
    TimeAxis a;
    a.setBounds({0, 1'000'000});
    a.setWidth(1000);
    a.setWindow({0, 100'000});
    a.panPixels(500); // 500 px x 100 ns
    CHECK(a.window() == TimeWindow{50'000, 150'000});
    a.panPixels(-5000);
    CHECK(a.window() == TimeWindow{0, 100'000});
    a.panPixels(1e9);
    CHECK(a.window() == TimeWindow{900'000, 1'000'000});
    a.setWindow({-50'000, 50'000}); // slid, not shrunk
    CHECK(a.window() == TimeWindow{0, 100'000});
    a.setWindow({10, 20}); // narrower than the minimum: widened around its centre
    CHECK(a.window().span() == TimeAxis::kMinSpanNs);
    CHECK(a.window().begin == 0);
}

TEST_CASE("zoom history goes back and forward and forgets the forward branch on a new zoom", "[gui][history]") {
    ensureGuiApp();
    ZoomStack z;
    QSignalSpy spy(&z, &ZoomStack::zoomChanged);
    z.reset({0, 1000});
    z.push({100, 200});
    z.push({120, 140});
    CHECK(z.size() == 3);
    CHECK(spy.count() == 3);
    z.back();
    CHECK(z.current() == TimeWindow{100, 200});
    z.back();
    CHECK(z.current() == TimeWindow{0, 1000});
    CHECK_FALSE(z.canGoBack());
    z.back(); // no-op, no signal
    CHECK(spy.count() == 5);
    z.forward();
    CHECK(z.current() == TimeWindow{100, 200});
    CHECK(z.canGoForward());
    z.push({150, 160}); // drops {120, 140}
    CHECK_FALSE(z.canGoForward());
    CHECK(z.size() == 3);
    z.replace({150, 170}); // continuous navigation edits the current entry
    CHECK(z.size() == 3);
    CHECK(z.current() == TimeWindow{150, 170});
    z.back();
    CHECK(z.current() == TimeWindow{100, 200});
    CHECK(spy.last().at(0).value<TimeWindow>() == TimeWindow{100, 200});
    z.push({100, 200}); // same as current: no new entry
    CHECK(z.size() == 3);
}

TEST_CASE("zoom history keeps at most its limit of entries", "[gui][history]") {
    ensureGuiApp();
    ZoomStack z;
    z.reset({0, 1});
    for (int i = 1; i <= 150; ++i) z.push({0, i + 1});
    CHECK(z.size() == ZoomStack::kMaxHistory);
    CHECK(z.current() == TimeWindow{0, 151});
}

TEST_CASE("filters report changes once", "[gui][history]") {
    ensureGuiApp();
    ZoomStack z;
    QSignalSpy spy(&z, &ZoomStack::filterChanged);
    Filter f;
    CHECK_FALSE(f.active());
    f.text = QStringLiteral("Allreduce");
    z.setFilter(f);
    z.setFilter(f);
    CHECK(spy.count() == 1);
    CHECK(z.filter().active());
}

TEST_CASE("resolutions are powers of two at least the fold width", "[gui][lod]") {
    CHECK(quantizedResolution(1.0) == 4);     // 3 ns -> 4
    CHECK(quantizedResolution(1000.0) == 4096); // 3000 ns -> 4096
    CHECK(quantizedResolution(0.01) == 1);
    CHECK(TimelinePainter::tickStep(10.0) == 1000);   // ~100 px at 10 ns/px
    CHECK(TimelinePainter::tickStep(33.0) == 5000);
    CHECK(TimelinePainter::tickStep(1.5e6) == 200'000'000);
}
