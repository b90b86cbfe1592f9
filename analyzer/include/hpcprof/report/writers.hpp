// SPDX-License-Identifier: MIT
/// Report writers: text for the terminal, markdown for CI job summaries, one self-contained HTML
/// file (inline CSS and SVG, no script, no external fetch, every trace name escaped), JSON and
/// JUnit XML. They only format what the analyses computed. User documentation: docs/reports.md.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/diff.hpp"
#include "hpcprof/report/gates.hpp"

namespace hpcprof::report {

enum class Format { Text, Markdown, Html, Json, Junit };

/// "text", "md" (or "markdown"), "html", "json", "junit"; false if unknown.
bool parseFormat(const std::string& text, Format& out);

struct WriterOptions {
    /// JUnit: findings at or above this severity become (failing) test cases.
    analyzer::Severity junitSeverity = analyzer::Severity::Warning;
    std::string hpcprofVersion;
};

/// Receives a report piece by piece; false stops the writing (the output failed).
using TextSink = std::function<bool(std::string_view)>;
/// The report to `sink`: JSON piece by piece (each rank's step items in turn, never the whole
/// text at once: hundreds of MB at 1,024 ranks), the other formats whole. False when the sink
/// failed.
bool writeReportTo(Format f, const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                   const WriterOptions& o, const TextSink& sink);
std::string writeReport(Format f, const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                        const WriterOptions& o = {});
std::string writeDiff(Format f, const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates,
                      const WriterOptions& o = {});

/// Escapes text for HTML element content and attribute values (& < > " ').
/// One family section of the text report (its name: "hang", "openmp", ...); empty when the
/// analysis has none.
std::string sectionText(const analyzer::Analysis& a, std::string_view name);

std::string htmlEscape(const std::string& s);
/// Escapes text for XML (the same five characters; control characters are left to printable()).
std::string xmlEscape(const std::string& s);
/// Escapes text for a markdown table cell (HTML-escaped, '|' and backticks escaped).
std::string markdownEscape(const std::string& s);

/// Human form of ns: "2620 s", "1.23 s", "45.6 ms", "789 us", "12 ns".
std::string formatDuration(double ns);
/// A finding's evidence value without a unit: "12499" (an integer), "0.6937".
std::string formatNumber(double v);

} // namespace hpcprof::report
