// SPDX-License-Identifier: MIT
// Shared helpers of the writers (escaping, durations) and the format dispatch.
#include <fmt/format.h>

#include <cmath>

#include "hpcprof/report/printable.hpp"
#include "hpcprof/report/report_json.hpp"
#include "hpcprof/report/writers.hpp"
#include "writer_parts.hpp"
#include "hpcprof/report/kernel_names.hpp"

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
    // Control characters, which XML 1.0 does not allow, are left to printable() (\xNN), as are
    // bytes that are not UTF-8: the writers pass their whole output through it.
    for (char c : s) {
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

std::string formatNumber(double v) {
    // Counts (12499 of 14360 collectives) as integers, whatever their size; other values with
    // four significant digits.
    if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
    return fmt::format("{:.4g}", v);
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
    // Whole seconds from 1000 s on: the sums over many ranks (2620 s of waits at 1,024 ranks)
    // read as numbers, not as 2.62e+03.
    if (a >= 999.5e9) return fmt::format("{:.0f} s", ns / 1e9);
    if (a >= 1e9) return fmt::format("{:.3g} s", ns / 1e9);
    if (a >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
    if (a >= 1e3) return fmt::format("{:.3g} us", ns / 1e3);
    return fmt::format("{:.0f} ns", ns);
}

namespace {
/// A JSON document as text; every string in it made printable first (nlohmann's dump() throws
/// on bytes that are not UTF-8).
std::string dumpPrintable(nlohmann::json& doc) {
    makePrintable(doc);
    std::string text = doc.dump(2);
    text += '\n'; // appended in place: `dump() + "\n"` would copy the whole report once more
    return text;
}
} // namespace

// The text formats are written whole, then passed through printable(): whatever a name holds,
// and whichever writer placed it, the output is UTF-8 without control characters but line feeds.
std::string writeReport(Format f, const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                        const WriterOptions& o) {
    switch (f) {
    case Format::Text: return printable(detail::textReport(a, gates), true);
    case Format::Markdown: return printable(detail::markdownReport(a, gates), true);
    case Format::Html: return printable(detail::htmlReport(a, gates, o), true);
    case Format::Junit: return printable(detail::junitReport(a, gates, o), true);
    case Format::Json: return detail::jsonReportText(a, gates, o.hpcprofVersion);
    }
    return {};
}

namespace detail {

std::vector<analyzer::TopItem> withShortKernelNames(std::vector<analyzer::TopItem> kernels) {
    // Longer than the GPU tables' 64: the report's list is one name a line, and at 64 kernels
    // that differ inside the name (weighted / unweighted) came out the same.
    constexpr size_t kMax = 100;
    std::vector<std::string_view> names;
    for (const auto& k : kernels) names.push_back(k.name);
    std::vector<std::string> shorts = analyzer::shortKernelNames(names, kMax);
    for (size_t i = 0; i < kernels.size(); ++i) kernels[i].name = std::move(shorts[i]);
    return kernels;
}

} // namespace detail

bool writeReportTo(Format f, const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                   const WriterOptions& o, const TextSink& sink) {
    if (f == Format::Json) return detail::writeJsonReport(a, gates, o.hpcprofVersion, sink);
    return sink(writeReport(f, a, gates, o));
}

std::string writeDiff(Format f, const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates,
                      const WriterOptions& o) {
    switch (f) {
    case Format::Json: {
        auto doc = diffJson(d);
        addGates(doc, gates);
        return dumpPrintable(doc);
    }
    case Format::Junit: return printable(detail::junitDiff(d, gates), true);
    case Format::Markdown: return printable(detail::markdownDiff(d, gates), true);
    case Format::Html: return printable(detail::htmlDiff(d, gates, o), true);
    case Format::Text: return printable(detail::textDiff(d, gates), true);
    }
    return {};
}

} // namespace hpcprof::report
