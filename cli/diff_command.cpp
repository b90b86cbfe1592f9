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
#include "progress.hpp"
#include "text_output.hpp"

namespace hpcprof::cli {

CLI::App* addDiffSubcommand(CLI::App& app, DiffCommandOptions& o) {
    auto* c = app.add_subcommand("diff", "Compare two traces and flag regressions");
    c->add_option("base", o.base, "Baseline trace")->required();
    c->add_option("new", o.next, "New trace")->required();
    c->add_option("--format", o.format, "text | md | html | json | junit")->capture_default_str();
    c->add_option("-o,--output", o.output, "Write the diff to FILE (default: stdout)");
    c->add_option("--window", o.window, "Analyse only T0:T1 or range:NAME in both traces ('all': the whole span)");
    c->add_option("--steps", o.steps, "Step family in both traces (see hpcprof report --steps)");
    // --threshold and --min-delta: the names of these options before the noise floor had three parts.
    c->add_option("--min-change-pct,--threshold", o.floor.minChangePct,
                  "Relative noise floor: a time changes only by more than this percent of its base value")
        ->check(numberFrom(0, 1e6, "%"))
        ->capture_default_str();
    c->add_option("--min-change-ns,--min-delta", o.floor.minChangeNs,
                  "Absolute noise floor in ns (the larger of this and --min-change-window-pct applies)")
        ->check(numberFrom(0, 1e15, "ns", /*integer=*/true))
        ->capture_default_str();
    c->add_option("--min-change-window-pct", o.floor.minChangeWindowPct,
                  "Absolute noise floor as a percent of the base job window")
        ->check(numberFrom(0, 100, "%"))
        ->capture_default_str();
    c->add_option("--min-efficiency-change", o.floor.minEfficiencyChange,
                  "Noise floor of the POP efficiencies (0..1)")
        ->check(numberFrom(0, 1, ""))
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
    // Every kernel, collective and file, not the report's top 10: an item that falls just out of
    // one run's top list would otherwise read as gone from it.
    ao.topItems = SIZE_MAX;
    auto window = analyzer::parseWindow(o.window);
    if (!window) {
        printMessage("diff", window.status().message());
        return kExitUsage;
    }
    ao.window = *window;
    ao.steps = o.steps;
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
        Progress progress("analysing " + *paths[i]);
        auto a = analyzer::analyzeTrace(*trace, ao);
        progress.finish();
        if (!a) {
            printMessage("diff", a.status().message());
            return kExitUsage;
        }
        analyses[i] = std::move(a.value());
    }
    auto d = analyzer::diffAnalyses(*analyses[0], *analyses[1], o.floor);
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
