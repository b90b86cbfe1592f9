// SPDX-License-Identifier: MIT
// Shared helpers of the writers (escaping, durations) and the format dispatch.
#include <fmt/format.h>

#include "hpcprof/report/report_json.hpp"
#include "hpcprof/report/writers.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report {

bool parseFormat(const std::string& text, Format& out) {
    if (text == "text") out = Format::Text;
    else if (text == "md" || text == "markdown") out = Format::Markdown;
    else if (text == "html") out = Format::Html;
    else if (text == "json") out = Format::Json;
    else if (text == "junit") out = Format::Junit;
    else return false;
    return true;
}

std::string htmlEscape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string xmlEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        unsigned char u = static_cast<unsigned char>(c);
        if (u < 0x20 && c != '\n' && c != '\t' && c != '\r') continue; // not allowed in XML 1.0
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string markdownEscape(const std::string& s) {
    std::string out;
    for (char c : htmlEscape(s)) {
        if (c == '|' || c == '`' || c == '*' || c == '_' || c == '[' || c == ']' || c == '\\') out += '\\';
        if (c == '\n' || c == '\r') {
            out += ' ';
            continue;
        }
        out += c;
    }
    return out;
}

std::string formatDuration(double ns) {
    double a = ns < 0 ? -ns : ns;
    if (a >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
    if (a >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
    if (a >= 1e3) return fmt::format("{:.3g} us", ns / 1e3);
    return fmt::format("{:.0f} ns", ns);
}

std::string writeReport(Format f, const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                        const WriterOptions& o) {
    switch (f) {
    case Format::Text: return detail::textReport(a, gates);
    case Format::Markdown: return detail::markdownReport(a, gates);
    case Format::Html: return detail::htmlReport(a, gates, o);
    case Format::Junit: return detail::junitReport(a, gates, o);
    case Format::Json: {
        auto doc = reportJson(a);
        addGates(doc, gates);
        if (!o.hpcprofVersion.empty()) doc["hpcprof_version"] = o.hpcprofVersion;
        return doc.dump(2) + "\n";
    }
    }
    return {};
}

std::string writeDiff(Format f, const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates,
                      const WriterOptions& o) {
    switch (f) {
    case Format::Json: {
        auto doc = diffJson(d);
        addGates(doc, gates);
        return doc.dump(2) + "\n";
    }
    case Format::Junit: return detail::junitDiff(d, gates);
    case Format::Markdown: return detail::markdownDiff(d, gates);
    case Format::Html: return detail::htmlDiff(d, gates, o);
    case Format::Text: return detail::textDiff(d, gates);
    }
    return {};
}

} // namespace hpcprof::report
