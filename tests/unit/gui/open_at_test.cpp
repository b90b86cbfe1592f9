// SPDX-License-Identifier: MIT
// hpcprof-gui's --window / --event / --finding: parsing and the view of an event.
#include <catch2/catch.hpp>

#include "models/open_at.hpp"

using namespace hpcprof::gui;

TEST_CASE("the GUI's window, event and finding options parse into where it opens (at most one of them)", "[gui][cli]") {
    auto none = parseOpenAt({}, {}, {});
    REQUIRE(none.ok());
    CHECK(none->empty());
    auto w = parseOpenAt(QStringLiteral("350us:450us"), {}, {});
    REQUIRE(w.ok());
    REQUIRE(w->window);
    CHECK(*w->window == TimeWindow{350'000, 450'000});
    CHECK(w->option == QStringLiteral("--window 350us:450us"));
    auto e = parseOpenAt({}, QStringLiteral("42"), {});
    REQUIRE(e.ok());
    CHECK(e->event == 42);
    CHECK_FALSE(e->window);
    auto f = parseOpenAt({}, {}, QStringLiteral("load-imbalance"));
    REQUIRE(f.ok());
    CHECK(f->finding == QStringLiteral("load-imbalance"));
    CHECK_FALSE(f->event);
    for (const char* bad : {"x", "-1", "4.5", "12ab"}) {
        INFO(bad);
        auto r = parseOpenAt({}, QString::fromLatin1(bad), {});
        REQUIRE_FALSE(r.ok());
        CHECK(r.status().message() == std::string("bad --event '") + bad + "' (want an event id, e.g. 42)");
    }
    CHECK_FALSE(parseOpenAt(QStringLiteral("soon"), {}, {}).ok());
    auto two = parseOpenAt({}, QStringLiteral("4"), QStringLiteral("straggler"));
    REQUIRE_FALSE(two.ok());
    CHECK(two.status().message() == "--window, --event and --finding exclude each other");
}

TEST_CASE("an event's view is centred on it, three times its length and at least 10 us", "[gui]") {
    CHECK(eventView(500'000, 100'000) == TimeWindow{400'000, 700'000});
    CHECK(eventView(1'000'000, 2'000) == TimeWindow{996'000, 1'006'000});
    CHECK(eventView(5'000, 0) == TimeWindow{0, 10'000});
}
