// SPDX-License-Identifier: MIT
#include "diff_command.hpp"

#include <fmt/format.h>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/diff.hpp"
#include "hpcprof/config.hpp"
#include "hpcprof/report/report_json.hpp"
#include "hpcprof/report/writers.hpp"
#include "messages.hpp"
#include "report_command.hpp"
#include "run_command.hpp"
#include "settings_check.hpp"
#include "text_output.hpp"

namespace hpcprof::cli {

CLI::App* addDiffSubcommand(CLI::App& app, DiffCommandOptions& o) {
    auto* c = app.add_subcommand("diff", "Compare two traces and flag regressions");
    c->add_option("base", o.base, "Baseline trace")->required();
    c->add_option("new", o.next, "New trace")->required();
    c->add_option("--format", o.format, "text | md | html | json | junit")->capture_default_str();
    c->add_option("-o,--output", o.output, "Write the diff to FILE (default: stdout)");
    c->add_option("--window", o.window, "Analyse only T0:T1 or range:NAME in both traces");
    c->add_option("--threshold", o.thresholdPct, "Percent growth that counts as a regression")
        ->check(numberFrom(0, 1e6, "%"))
        ->capture_default_str();
    c->add_option("--min-delta", o.minDeltaNs, "Noise floor in ns below which growth is ignored")
        ->check(numberFrom(0, 1e15, "ns", /*integer=*/true))
        ->capture_default_str();
    c->add_option("--fail-on", o.failOn, "Gate on the diff, e.g. 'regressions > 0' (repeatable; exit 3 if true)");
    c->add_flag("--include-setup", o.includeSetup,
                "POP rows on the whole window, MPI start-up and shutdown included");
    return c;
}

int diffCommand(const DiffCommandOptions& o) {
    report::Format format;
    if (!report::parseFormat(o.format, format)) {
        printMessage("diff", "unknown --format '" + o.format + "' (text, md, html, json, junit)");
        return kExitUsage;
    }
    std::vector<report::Gate> gates;
    for (const auto& text : o.failOn) {
        auto g = report::parseGate(text);
        if (!g) {
            printMessage("diff", g.status().message());
            return kExitUsage;
        }
        gates.push_back(*g);
    }
    analyzer::AnalysisOptions ao;
    auto window = analyzer::parseWindow(o.window);
    if (!window) {
        printMessage("diff", window.status().message());
        return kExitUsage;
    }
    ao.window = *window;
    ao.popIncludesSetup = o.includeSetup;
    if (Status s = checkTextOutput(o.output); !s.ok()) { // before the analyses, not after
        printMessage("diff", s.message());
        return kExitUsage;
    }
    std::optional<analyzer::Analysis> analyses[2];
    const std::string* paths[2] = {&o.base, &o.next};
    for (int i = 0; i < 2; ++i) {
        auto trace = analyzer::Trace::open(*paths[i]);
        if (!trace) {
            printMessage("diff", trace.status().message());
            return kExitUsage;
        }
        auto a = analyzer::analyzeTrace(*trace, ao);
        if (!a) {
            printMessage("diff", a.status().message());
            return kExitUsage;
        }
        analyses[i] = std::move(a.value());
    }
    analyzer::DiffOptions dopt;
    dopt.thresholdPct = o.thresholdPct;
    dopt.minDeltaNs = o.minDeltaNs;
    auto d = analyzer::diffAnalyses(*analyses[0], *analyses[1], dopt);
    auto results = report::evaluateGates(report::diffJson(d), gates);
    if (!results) {
        printMessage("diff", results.status().message());
        return kExitUsage;
    }
    report::WriterOptions wo;
    wo.hpcprofVersion = HPCPROF_VERSION;
    if (!writeOutput(o.output, report::writeDiff(format, d, *results, wo), "diff")) return kExitUsage;
    int failed = 0;
    for (const auto& r : *results)
        if (r.failed) {
            ++failed;
            printMessage("diff",
                         fmt::format("gate failed: {} (value {:.6g})", r.gate.text, r.value));
        }
    return failed ? report::kExitGateFailed : 0;
}

} // namespace hpcprof::cli
