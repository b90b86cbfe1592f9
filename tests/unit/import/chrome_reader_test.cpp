// SPDX-License-Identifier: MIT
// The fast Chrome/Kineto reader (block scanner + simdjson) against nlohmann's SAX handler, which
// defined what an event parses to: the same events, args and top-level facts on tricky JSON
// (escapes, braces in strings, unicode, exponents, huge integers, elements across read blocks,
// an element larger than a block), and clear errors with positions on damaged input.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "import/chrome_reader.hpp"
#include "import/json_scanner.hpp"
#include "process_runner.hpp"
#include "import/sax_handler.hpp"

using namespace hpcprof::import;
using hpcprof::test::TempDir;

namespace {

std::string describe(const ArgValue& v) {
    char d[64];
    std::snprintf(d, sizeof d, "%a", v.d);
    return std::to_string(int(v.kind)) + "/" + std::to_string(v.i) + "/" + d + "/" + v.text;
}

/// Writes down everything a reader hands over, in order.
class RecordingSink : public EventSink {
public:
    std::vector<std::string> log;
    void onEvent(const ParsedEvent& e) override {
        auto id = [](const IdField& f) {
            return f.present ? (f.isInt ? "i" + std::to_string(f.i) : "s" + f.text) : "-";
        };
        auto time = [](const TimeField& f) {
            return f.present ? (f.isInt ? "i" + std::to_string(f.i) : "s" + f.text) : "-";
        };
        std::string s = std::string("event ph=") + (e.ph ? std::string(1, e.ph) : "") +
                        " name=" + (e.hasName ? e.name : "<none>") + " cat=" + e.cat +
                        " pid=" + id(e.pid) + " tid=" + id(e.tid) + " id=" + id(e.id) +
                        " ts=" + time(e.ts) + " dur=" + time(e.dur) + " bp=" + e.bp +
                        " typeError=" + std::to_string(e.typeError);
        for (size_t i = 0; i < e.argCount; ++i)
            s += " [" + e.args[i].first + "=" + describe(e.args[i].second) + "]";
        log.push_back(s);
    }
    void onTopLevel(const std::string& key, const ArgValue& v) override {
        log.push_back("top " + key + "=" + describe(v));
    }
    void onNonObjectEvent() override { log.push_back("non-object"); }
};

/// The reference: nlohmann's SAX parser with the handler over the whole text.
std::vector<std::string> referenceParse(const std::string& text, bool& complete) {
    RecordingSink sink;
    ProgressFn none;
    detail::SaxHandler handler(sink, nullptr, none);
    complete = nlohmann::json::sax_parse(text.begin(), text.end(), &handler,
                                         nlohmann::json::input_format_t::json, true);
    return sink.log;
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// Events with every construct the scanner and the parser must get right.
std::string trickyEvents(int copies) {
    std::string ev;
    for (int k = 0; k < copies; ++k) {
        if (!ev.empty()) ev += ",\n";
        std::string n = std::to_string(k);
        ev += R"({"ph":"X","name":"brace } in \"quoted\" [name] \\ )" + n +
              R"(","cat":"cpu_op","pid":1,"tid":2,"ts":1.5e3,"dur":25E-1,)"
              R"("args":{"u":"caf\u00e9 \ud83d\ude00","big":18446744073709551615,)"
              R"("bigger":18446744073709551616,"neg":-9223372036854775809,"zero":-0,)"
              R"("flat":[1,2.50,"x",true,null],"nested":[[1],[2]],"obj":{"a":{"b":"}"}},)"
              R"("exp":-1.25e-7,"t":true,"f":false,"n":null,"id":)" + n + R"(}},)";
        ev += R"({"ph":"s","id":"0x1f","pid":"host","tid":3,"ts":7,"bp":"e","cat":5},)"
              R"({"na\u006de":"escaped key","ph":"i","pid":1,"tid":2,"ts":8,"s":"t"},)"
              R"({"ph":"X","name":["bad"],"pid":{"x":1},"ts":"1","dur":null,"args":[1]},)"
              R"(42,"text",[1,{"a":2}],null,-1.5e+2)";
    }
    return ev;
}

} // namespace

TEST_CASE("the fast reader gives exactly what nlohmann's handler gives, across read blocks",
          "[import][reader]") {
    TempDir dir;
    // Enough events to span several 1 MiB read blocks, one element bigger than a block, and
    // top-level members before and after traceEvents.
    std::string bigName(3 << 20, 'z');
    bigName[100] = '}';
    bigName[2000] = '"';
    bigName.insert(2000, "\\");
    std::string text = "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": "
                       "\"GPU {0}\"}, {\"id\": 1}],\n \"traceEvents\": [\n" +
                       trickyEvents(4000) + ",\n{\"ph\":\"X\",\"name\":\"" + bigName +
                       "\",\"ts\":1,\"dur\":2}\n],\n \"distributedInfo\": {\"rank\": 3, "
                       "\"backend\": \"nc\\\"cl\"}, \"traceName\": \"t\\u0041\"}\n";
    writeText(dir / "t.json", text);
    bool refComplete = false;
    auto expected = referenceParse(text, refComplete);
    REQUIRE(refComplete);
    RecordingSink sink;
    auto r = readChromeTrace(dir / "t.json", sink);
    REQUIRE(r.ok());
    CHECK(r->complete);
    CHECK(r->error.empty());
    CHECK(r->events == 4000 * 9 + 1);
    CHECK(r->bytes == text.size());
    REQUIRE(sink.log.size() == expected.size());
    CHECK(sink.log.size() == 4000 * 9 + 1 + 7); // 7 top-level scalars
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO("entry " << i);
        REQUIRE(sink.log[i] == expected[i]);
    }
    // Without escapes the scanner takes its 64-byte fast path: brackets inside strings, nested
    // args, strings spanning blocks.
    std::string plain = "{\"traceEvents\":[";
    for (int k = 0; k < 20000; ++k)
        plain += std::string(k ? "," : "") + "{\"ph\":\"X\",\"name\":\"op {" + std::to_string(k) +
                 "} [x]\",\"ts\":" + std::to_string(k) + ".5,\"dur\":1,\"args\":{\"a\":[1,[2]]," +
                 "\"o\":{\"k\":\"v}]\"},\"s\":\"" + std::string(size_t(k % 97), '{') + "\"}}\n";
    plain += "]}";
    writeText(dir / "plain.json", plain);
    RecordingSink plainSink;
    auto pr = readChromeTrace(dir / "plain.json", plainSink);
    REQUIRE(pr.ok());
    CHECK(pr->complete);
    CHECK(pr->events == 20000);
    CHECK(plainSink.log == referenceParse(plain, refComplete));
    // A bare array of events reads the same way.
    std::string bare = "[" + trickyEvents(3) + "]";
    writeText(dir / "bare.json", bare);
    RecordingSink bareSink;
    auto b = readChromeTrace(dir / "bare.json", bareSink);
    REQUIRE(b.ok());
    CHECK(b->complete);
    CHECK(bareSink.log == referenceParse(bare, refComplete));
    CHECK(bareSink.log.size() == 27);
}

TEST_CASE("the structural scanner finds value ends through escapes at every block offset",
          "[import][reader]") {
    for (size_t pad = 0; pad < 40; ++pad) {
        std::string v = "{\"" + std::string(pad, 'a') + "\\\"}\\\\\": [1, \"]\"], \"b\": {}}";
        std::string buf = v + ", 5" + std::string(kScanPadding, ' ');
        ScanResult r = scanValue(buf.data(), v.size() + 3, 0, false);
        INFO("pad " << pad);
        REQUIRE(r.kind == ScanResult::Kind::Complete);
        CHECK(r.end == v.size());
        // Cut anywhere inside: more input is needed, or at the end of input it is an error.
        for (size_t cut = 1; cut < v.size(); cut += 7) {
            CHECK(scanValue(buf.data(), cut, 0, false).kind == ScanResult::Kind::NeedMore);
            ScanResult e = scanValue(buf.data(), cut, 0, true);
            CHECK(e.kind == ScanResult::Kind::Error);
            CHECK(e.errorAt == cut);
        }
    }
    std::string ctrl = "{\"a\tb\": 1}" + std::string(kScanPadding, ' ');
    ScanResult c = scanValue(ctrl.data(), 10, 0, true);
    CHECK(c.kind == ScanResult::Kind::Error);
    CHECK(c.errorAt == 3);
    std::string num = "-1.5e+3]" + std::string(kScanPadding, ' ');
    ScanResult n = scanValue(num.data(), 8, 0, false);
    CHECK(n.kind == ScanResult::Kind::Complete);
    CHECK(n.end == 7);
}

TEST_CASE("invalid UTF-8 is found at the first byte that starts no well-formed sequence",
          "[import][reader]") {
    struct Case {
        std::string text;
        size_t expected;
    };
    // The edges of Unicode's table of well-formed byte sequences (table 3-7).
    const Case cases[] = {
        {"plain ascii", 11},
        {"\x7f", 1},
        {"\xc2\x80\xdf\xbf", 4},
        {"a\xc1\xbf", 1},             // overlong two-byte form
        {"ab\xc2", 2},                 // cut by the end
        {"\xe0\xa0\x80", 3},
        {"\xe0\x9f\xbf", 0},         // overlong three-byte form
        {"\xe1\x80\x80\xec\xbf\xbf", 6},
        {"\xed\x9f\xbf", 3},
        {"x\xed\xa0\x80", 1},        // a surrogate
        {"\xee\x80\x80\xef\xbf\xbf", 6},
        {"\xe1\x80", 0},
        {"\xf0\x90\x80\x80", 4},
        {"\xf0\x8f\xbf\xbf", 0},    // overlong four-byte form
        {"\xf1\x80\x80\x80\xf3\xbf\xbf\xbf", 8},
        {"\xf4\x8f\xbf\xbf", 4},
        {"\xf4\x90\x80\x80", 0},    // beyond U+10FFFF
        {"\xf5\x80\x80\x80", 0},
        {"ok\x80", 2},                 // a continuation byte alone
        {"\xf0\x90\x80", 0},
        {"\xe2\x82\xac\xe2\x28\xac", 3},
    };
    for (const Case& c : cases) {
        INFO("bytes " << c.text.size() << ", expected " << c.expected);
        CHECK(findInvalidUtf8(c.text.data(), c.text.size()) == c.expected);
    }
}

TEST_CASE("damage inside an event stops the read at its position and keeps the events before",
          "[import][reader][malformed]") {
    TempDir dir;
    std::string ok = "{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1}";
    std::string head = "{\"traceEvents\":[" + ok + ",\n" + ok + ",\n";
    struct Case {
        std::string bad, what;
    };
    std::vector<Case> cases = {
        {"{\"ph\":\"X\",\"name\":tru,\"ts\":1}", "invalid event"},
        {"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1.2.3}", "invalid event"},
        {"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1e999}", "invalid number"}, // beyond double
        {"{\"ph\":\"X\",\"name\":\"\\ud800x\",\"ts\":1}", "surrogate"},
        {"{\"ph\":\"X\",\"name\":\"\xff\xfe\",\"ts\":1}", "invalid event"},
        {"{\"ph\":\"X\",\"name\":\"a\nb\",\"ts\":1}", "control character"},
        {"{\"ph\":\"X\" \"name\":\"a\"}", "invalid event"},
    };
    for (const auto& c : cases) {
        INFO(c.bad);
        std::string text = head + c.bad + ",\n" + ok + "]}";
        writeText(dir / "bad.json", text);
        RecordingSink sink;
        auto r = readChromeTrace(dir / "bad.json", sink);
        REQUIRE(r.ok());
        CHECK_FALSE(r->complete);
        CHECK_THAT(r->error, Catch::Contains(c.what));
        CHECK_THAT(r->error, Catch::Contains("line 3, column"));
        CHECK(r->events == 2);
        CHECK(sink.log.size() == 2);
    }
    // Cut inside a string that holds a closing brace: an unexpected end, one past the data.
    std::string cut = head + "{\"ph\":\"X\",\"name\":\"a}";
    writeText(dir / "cut.json", cut);
    RecordingSink sink;
    auto r = readChromeTrace(dir / "cut.json", sink);
    REQUIRE(r.ok());
    CHECK_FALSE(r->complete);
    CHECK_THAT(r->error, Catch::Contains("unexpected end of input"));
    CHECK_THAT(r->error, Catch::Contains("(byte " + std::to_string(cut.size() + 1) + ")"));
    CHECK(r->events == 2);
    // Junk between elements and after the document.
    writeText(dir / "sep.json", head + ok + " x]}");
    auto s = readChromeTrace(dir / "sep.json", sink);
    REQUIRE(s.ok());
    CHECK_THAT(s->error, Catch::Contains("unexpected 'x'; expected ',' or ']'"));
    CHECK(s->events == 3);
    writeText(dir / "tail.json", head + ok + "]} {");
    auto t = readChromeTrace(dir / "tail.json", sink);
    REQUIRE(t.ok());
    CHECK_FALSE(t->complete);
    CHECK_THAT(t->error, Catch::Contains("expected end of input"));
    CHECK(t->events == 3);
}
