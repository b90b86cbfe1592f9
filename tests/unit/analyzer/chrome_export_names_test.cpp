// SPDX-License-Identifier: MIT
// The Chrome export stays valid JSON whatever bytes a name holds: every byte that cannot start
// a UTF-8 sequence (C0, C1, F5-FF) or that breaks one becomes U+FFFD, control characters are
// \u escapes, valid text passes through.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/chrome_export.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using schema::Category;

TEST_CASE("the Chrome export writes valid JSON for names of any bytes", "[analyzer][export]") {
    const std::string names[] = {
        std::string("lead\xF5\x80\x80z"), // F5 leads no sequence, even before continuations
        std::string("ff\xFF\xFE"),
        std::string("cut\xE2\x82"),       // a three-byte sequence cut short
        std::string("c0\xC0\xAF"),        // an overlong form
        std::string("ok \xE2\x82\xAC \xF0\x9F\x98\x80"), // euro sign, emoji
        std::string("esc\x1B[31m\x07"),
    };
    test::TraceBuilder b;
    int t = b.rank(0, 0, 1000, 1);
    int64_t at = 0;
    for (const auto& n : names) b.event(t, Category::UserRange, n, at += 10, 5);
    test::TempDir dir;
    b.write(dir / "t.hpcprof");
    auto trace = analyzer::Trace::open(dir / "t.hpcprof");
    REQUIRE(trace.ok());
    analyzer::ChromeExportOptions o;
    o.output = dir / "t.json";
    REQUIRE(analyzer::exportChromeTrace(*trace, o).ok());
    std::ifstream in(dir / "t.json", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc;
    REQUIRE_NOTHROW(doc = nlohmann::json::parse(text.str())); // throws on invalid UTF-8
    std::vector<std::string> got;
    for (const auto& e : doc["traceEvents"])
        if (e.value("ph", "") == "X") got.push_back(e["name"]);
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(got == std::vector<std::string>{"lead" + fffd + fffd + fffd + "z", "ff" + fffd + fffd,
                                          "cut" + fffd + fffd, "c0" + fffd + fffd,
                                          names[4], "esc\x1B[31m\x07"});
    CHECK(text.str().find("\\u001b[31m\\u0007") != std::string::npos);
}
