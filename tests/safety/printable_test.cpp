// SPDX-License-Identifier: MIT
// The display form of names (report::printable): what every report format and message writes.
#include <catch2/catch.hpp>

#include "hpcprof/report/printable.hpp"
#include "reader_checks.hpp"

using hpcprof::report::printable;

TEST_CASE("printable writes bytes that are not UTF-8 and control characters as \\xNN",
          "[robustness][printable]") {
    CHECK(printable("plain name") == "plain name");
    CHECK(printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80") ==
          "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");
    CHECK(printable("a\xff"
                    "b") == "a\\xFFb");
    CHECK(printable("\x1b[31mred") == "\\x1B[31mred");
    CHECK(printable("bell\x07 cr\r tab\t del\x7f") == "bell\\x07 cr\\x0D tab\\x09 del\\x7F");
    CHECK(printable(std::string("nul\0x", 5)) == "nul\\x00x");
    CHECK(printable("c1 csi \xc2\x9b"
                    "31m") == "c1 csi \\xC2\\x9B31m");    // U+009B: both bytes
    CHECK(printable("cut \xe2\x82") == "cut \\xE2\\x82"); // sequence cut short
    CHECK(printable("lone \x80 continuation") == "lone \\x80 continuation");
    CHECK(printable("overlong \xc0\xaf") == "overlong \\xC0\\xAF");
    CHECK(printable("surrogate \xed\xa0\x80") == "surrogate \\xED\\xA0\\x80");
    CHECK(printable("beyond \xf4\x90\x80\x80") == "beyond \\xF4\\x90\\x80\\x80");
    CHECK(printable("nonchar \xef\xbf\xbe") == "nonchar \\xEF\\xBF\\xBE");
    CHECK(printable("two\nlines") == "two\\x0Alines");
    CHECK(printable("two\nlines", true) == "two\nlines");
    // A broken sequence takes only its first byte: what follows is read on its own.
    CHECK(printable("\xe2"
                    "abc") == "\\xE2"
                              "abc");
}

TEST_CASE("printable output is safe for any bytes", "[robustness][printable]") {
    // Every byte value in every position of short strings, and random longer ones.
    std::string all;
    for (int a = 0; a < 256; ++a)
        for (int b = 0; b < 256; b += 17) {
            std::string s = {char(a), char(b), char(0xe2), char(a), char(0x82)};
            INFO(a << " " << b);
            REQUIRE(hpcprof::test::unsafeBytes(printable(s)) == "");
            REQUIRE(hpcprof::test::unsafeBytes(printable(s, true)) == "");
        }
    uint32_t x = 12345;
    for (int i = 0; i < 2000; ++i) {
        std::string s(size_t(i % 40), '\0');
        for (auto& c : s) {
            x = x * 1664525u + 1013904223u;
            c = char(x >> 24);
        }
        REQUIRE(hpcprof::test::unsafeBytes(printable(s)) == "");
        REQUIRE(hpcprof::report::isPrintable(printable(s)));
    }
}
