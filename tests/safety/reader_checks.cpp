// SPDX-License-Identifier: MIT
#include "reader_checks.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace hpcprof::test {

namespace fs = std::filesystem;

namespace {

std::string hex(unsigned char c) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%02X", c);
    return b;
}

/// argv for a failure message: every byte outside printable ASCII as \xNN.
std::string shown(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        out += out.empty() ? "" : " ";
        for (unsigned char c : a) {
            if (c >= 0x20 && c < 0x7F)
                out += char(c);
            else
                out += "\\x" + hex(c).substr(2);
        }
    }
    return out;
}

size_t lineCount(const std::string& s) {
    return size_t(std::count(s.begin(), s.end(), '\n'));
}

void writeFile(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

} // namespace

std::string unsafeBytes(const std::string& t) {
    for (size_t i = 0; i < t.size();) {
        const auto c = static_cast<unsigned char>(t[i]);
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n') || c == 0x7F)
                return "control byte " + hex(c) + " at offset " + std::to_string(i);
            ++i;
            continue;
        }
        size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                     : c >= 0xE0 && c <= 0xEF ? 3
                     : c >= 0xF0 && c <= 0xF4 ? 4
                                              : 0;
        if (len == 0 || i + len > t.size())
            return "invalid UTF-8 byte " + hex(c) + " at offset " + std::to_string(i);
        uint32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
        for (size_t k = 1; k < len; ++k) {
            const auto b = static_cast<unsigned char>(t[i + k]);
            if ((b & 0xC0) != 0x80)
                return "invalid UTF-8 sequence at offset " + std::to_string(i);
            cp = cp << 6 | (b & 0x3F);
        }
        const uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
        if (cp < least || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            return "invalid UTF-8 (overlong, surrogate or beyond U+10FFFF) at offset " +
                   std::to_string(i);
        if (cp >= 0x80 && cp <= 0x9F)
            return "C1 control character at offset " + std::to_string(i);
        i += len;
    }
    return {};
}

std::vector<int> ReaderRunner::codes(Outcome o, bool gated) {
    switch (o) {
    case Outcome::Valid:
        return {gated ? 3 : 0};
    case Outcome::Refused:
        return {2};
    case Outcome::Either:
        return {gated ? 3 : 0, 2};
    }
    return {};
}

ProcessResult ReaderRunner::run(const std::vector<std::string>& argv,
                                const std::vector<int>& allowed, Output kind,
                                const std::string& outputFile, const std::string& refusalText,
                                const std::vector<std::string>& env) {
    // A reader that hangs on some input fails the test (exit 124) instead of stalling it.
    std::vector<std::string> full = {"timeout", "-k", "5", "60"};
    full.insert(full.end(), argv.begin(), argv.end());
    ProcessResult r = runProcess(full, env);
    INFO("command: " << shown(argv));
    INFO("exit code " << r.exitCode << ", stderr: " << shown({r.err}));
    CHECK(r.exitCode != 124);
    CHECK(r.exitCode < 128); // no signal: no abort (134), no segfault (139)
    CHECK(std::find(allowed.begin(), allowed.end(), r.exitCode) != allowed.end());
    CHECK(unsafeBytes(r.err) == "");
    CHECK(unsafeBytes(r.out) == "");
    if (r.exitCode == 2) {
        // A refusal: one line that says so, and no output left behind.
        CHECK(lineCount(r.err) == 1);
        CHECK(r.err.rfind("hpcprof", 0) == 0);
        if (!refusalText.empty())
            CHECK_THAT(r.err, Catch::Contains(refusalText));
        if (!outputFile.empty())
            CHECK_FALSE(fs::exists(outputFile));
        return r;
    }
    if (r.exitCode != 0 && r.exitCode != 3)
        return r;
    if (kind == Output::None)
        return r;
    const std::string out = outputFile.empty() ? r.out : readWholeFile(outputFile);
    CHECK_FALSE(out.empty());
    switch (kind) {
    case Output::None:
        break;
    case Output::Text:
    case Output::Html:
        CHECK(unsafeBytes(out) == "");
        break;
    case Output::Junit: {
        CHECK(unsafeBytes(out) == "");
        const fs::path p = m_scratch / ("junit-" + std::to_string(m_next++) + ".xml");
        writeFile(p, out);
        m_xml.push_back(p.string());
        break;
    }
    case Output::Json:
    case Output::Chrome: {
        CHECK(unsafeBytes(out) == "");
        auto doc = nlohmann::json::parse(out, nullptr, false);
        CHECK_FALSE(doc.is_discarded());
        if (kind == Output::Json && doc.is_object() &&
            doc.value("schema", "") == "hpcprof-report") {
            const fs::path p = m_scratch / ("report-" + std::to_string(m_next++) + ".json");
            writeFile(p, out);
            m_reports.push_back(p.string());
        }
        break;
    }
    case Output::Png:
        CHECK(out.rfind("\x89PNG", 0) == 0);
        break;
    }
    return r;
}

void ReaderRunner::validateQueued() {
    if (m_xml.empty() && m_reports.empty())
        return;
    if (!haveProgram("python3")) {
        WARN("python3 is missing: JUnit XML and JSON reports were only checked for encoding");
        return;
    }
    if (!m_xml.empty()) {
        std::vector<std::string> argv = {"python3", "-c",
                                         "import sys, xml.dom.minidom as m\n"
                                         "for f in sys.argv[1:]: m.parse(f)\n"
                                         "print('well-formed')"};
        argv.insert(argv.end(), m_xml.begin(), m_xml.end());
        auto v = runProcess(argv);
        INFO(v.err);
        CHECK(v.exitCode == 0);
        CHECK_THAT(v.out, Catch::Contains("well-formed"));
    }
    if (!m_reports.empty()) {
        if (runProcess({"python3", "-c", "import jsonschema"}).exitCode != 0) {
            WARN("python3-jsonschema is missing: JSON reports were only parsed");
        } else {
            std::vector<std::string> argv = {
                "python3", "-c",
                "import json, sys, jsonschema\n"
                "schema = json.load(open(sys.argv[1]))\n"
                "for f in sys.argv[2:]: jsonschema.validate(json.load(open(f)), schema)\n"
                "print('valid')",
                std::string(HPCPROF_TEST_SOURCE_DIR) + "/docs/report-schema.json"};
            argv.insert(argv.end(), m_reports.begin(), m_reports.end());
            auto v = runProcess(argv);
            INFO(v.err);
            CHECK(v.exitCode == 0);
            CHECK_THAT(v.out, Catch::Contains("valid"));
        }
    }
    m_xml.clear();
    m_reports.clear();
}

void ReaderRunner::checkNoLeftovers(const fs::path& dir) {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
        INFO("left behind: " << shown({e.path().string()}));
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    }
}

std::string guiBinary() {
    return HPCPROF_TEST_BUILD_DIR "/bin/hpcprof-gui";
}

bool haveGui() {
    return fs::exists(guiBinary());
}

bool haveProgram(const std::string& name) {
    return runProcess({"sh", "-c", "command -v " + name}).exitCode == 0;
}

} // namespace hpcprof::test
