// SPDX-License-Identifier: MIT
// JUnit XML: one test case per gate (failed when the gate fails) and one per finding at or above
// the chosen severity (reported as a failure, so CI dashboards list it).
#include <fmt/format.h>

#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

namespace {
struct Case {
    std::string classname, name, failureMessage, failureType, body;
    bool failed = false;
};

/// The data-quality warnings as properties of the suite ("data_quality.NAME" = count), so a
/// CI dashboard shows what the numbers miss.
std::string properties(const std::vector<DataWarning>& warnings) {
    if (warnings.empty()) return {};
    std::string o = "    <properties>\n";
    for (const auto& w : warnings)
        o += fmt::format("      <property name=\"data_quality.{}\" value=\"{}\"/>\n",
                         xmlEscape(w.name), w.count);
    return o + "    </properties>\n";
}

std::string suite(const std::string& name, const std::vector<Case>& cases,
                  const std::vector<DataWarning>& warnings = {}) {
    int failures = 0;
    for (const auto& c : cases) failures += c.failed;
    std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    o += fmt::format("<testsuites name=\"hpcprof\" tests=\"{}\" failures=\"{}\">\n", cases.size(), failures);
    o += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     xmlEscape(name), cases.size(), failures);
    o += properties(warnings);
    for (const auto& c : cases) {
        o += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xmlEscape(c.classname), xmlEscape(c.name));
        if (!c.failed) {
            o += "/>\n";
            continue;
        }
        o += fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                         xmlEscape(c.failureMessage), xmlEscape(c.failureType), xmlEscape(c.body));
    }
    o += "  </testsuite>\n</testsuites>\n";
    return o;
}

void addGates(std::vector<Case>& cases, const std::vector<GateResult>& gates) {
    for (const auto& g : gates)
        cases.push_back({"hpcprof.gates", g.gate.text, fmt::format("value {:.6g}", g.value), "gate", gateLine(g),
                         g.failed});
}
} // namespace

std::string junitReport(const Analysis& a, const std::vector<GateResult>& gates, const WriterOptions& o) {
    std::vector<Case> cases;
    addGates(cases, gates);
    for (const auto& f : a.findings) {
        if (f.severity < o.junitSeverity) continue;
        cases.push_back({"hpcprof.findings", f.id + ": " + f.title,
                         fmt::format("{} ({})", f.title, gainText(f)),
                         severityName(f.severity),
                         fmt::format("ranks: {}\nevidence: {}\nsuggestion: {}", rankList(f.ranks), evidenceText(f),
                                     f.suggestion),
                         true});
    }
    return suite("hpcprof report " + a.tracePath, cases, a.warnings);
}

std::string junitDiff(const AnalysisDiff& d, const std::vector<GateResult>& gates) {
    std::vector<Case> cases;
    addGates(cases, gates);
    for (const auto& r : d.rows)
        if (r.regression())
            cases.push_back({"hpcprof.regressions." + r.scope, r.name, diffChangeText(r), "regression",
                             fmt::format("base {}, new {} ({}); {}", diffValueText(r, r.base), diffValueText(r, r.next),
                                         diffChangeText(r), noiseFloorText(d)),
                             true});
    if (cases.empty()) cases.push_back({"hpcprof.regressions", "no regressions", "", "", "", false});
    return suite("hpcprof diff " + d.basePath + " -> " + d.newPath, cases);
}

} // namespace hpcprof::report::detail
