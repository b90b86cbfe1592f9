// SPDX-License-Identifier: MIT
#include <cstdint>
#include <optional>

#include "report_command.hpp"

#include <fmt/format.h>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/config.hpp"
#include "hpcprof/report/report_json.hpp"
#include "hpcprof/report/writers.hpp"
#include "messages.hpp"
#include "run_command.hpp"
#include "settings_check.hpp"
#include "progress.hpp"
#include "text_output.hpp"

namespace hpcprof::cli {

CLI::App* addReportSubcommand(CLI::App& app, ReportOptions& o) {
    auto* c = app.add_subcommand("report", "Analyse a trace: where the time went, why, and what to change");
    c->add_option("trace", o.trace, "Trace file")->required();
    c->add_option("--format", o.format, "text | md | html | json | junit")->capture_default_str();
    c->add_option("-o,--output", o.output, "Write the report to FILE (default: stdout)");
    c->add_option("--window", o.window,
                  "Analyse only T0:T1 (ns, or with unit ns|us|ms|s) or range:NAME; 'all' for the whole "
                  "recorded span (default: the steps, or the first to last activity)");
    c->add_option("--steps", o.steps,
                  "Step family: a range name without its number (ProfilerStep, Optimizer.step#, NAME*) "
                  "or 'collectives' (default: chosen by what a step is)");
    c->add_option("--fail-on", o.failOn, "Gate, e.g. 'comm.exposed_pct > 25' (repeatable; exit 3 if true)");
    c->add_option("--junit-severity", o.junitSeverity, "JUnit: findings at or above info|warning|critical")
        ->capture_default_str();
    c->add_option("--link-gbps", o.linkGbps, "Link bandwidth in GB/s for the collective bandwidth rule")
        ->check(numberFrom(0, 100000, "GB/s"));
    c->add_option("--memory-gbps", o.memoryGbps,
                  "Copy bandwidth in GB/s the collective bandwidth rule uses when all ranks share one host (default 10)")
        ->check(numberFrom(0, 100000, "GB/s"));
    c->add_flag("--include-setup", o.includeSetup,
                "POP metrics on the whole window, MPI start-up and shutdown included (default: "
                "between each rank's MPI_Init and MPI_Finalize)");
    c->add_flag("--all-steps", o.allSteps,
                "List every step of every rank (default: each rank's slowest 10 when the job has "
                "more than 100,000 rank-steps; counts and statistics always cover all)");
    return c;
}

namespace {

/// The analysis options the command line asks for; nullopt (after a message) for a wrong --window.
std::optional<analyzer::AnalysisOptions> analysisOptions(const ReportOptions& o) {
    analyzer::AnalysisOptions ao;
    auto window = analyzer::parseWindow(o.window);
    if (!window) {
        printMessage("report", window.status().message());
        return std::nullopt;
    }
    ao.window = *window;
    ao.steps = o.steps;
    ao.linkBandwidthBytesPerS = o.linkGbps * 1e9;
    ao.memoryBandwidthBytesPerS = o.memoryGbps * 1e9;
    ao.popIncludesSetup = o.includeSetup;
    if (o.allSteps) ao.maxRankStepItems = SIZE_MAX;
    return ao;
}

/// Says each failed gate on stderr; whether any failed.
bool sayFailedGates(const std::vector<report::GateResult>& results) {
    bool any = false;
    for (const auto& r : results)
        if (r.failed) {
            any = true;
            printMessage("report", fmt::format("gate failed: {} (value {:.6g})", r.gate.text, r.value));
        }
    return any;
}

} // namespace

int reportCommand(const ReportOptions& o) {
    report::Format format;
    if (!report::parseFormat(o.format, format)) {
        printMessage("report", "unknown --format '" + o.format + "' (text, md, html, json, junit)");
        return kExitUsage;
    }
    report::WriterOptions wo;
    wo.hpcprofVersion = HPCPROF_VERSION;
    if (!analyzer::parseSeverity(o.junitSeverity, wo.junitSeverity)) {
        printMessage("report", "unknown --junit-severity '" + o.junitSeverity +
                                   "' (info, warning, critical)");
        return kExitUsage;
    }
    std::vector<report::Gate> gates;
    for (const auto& text : o.failOn) {
        auto g = report::parseGate(text);
        if (!g) {
            printMessage("report", g.status().message());
            return kExitUsage;
        }
        gates.push_back(*g);
    }
    auto ao = analysisOptions(o);
    if (!ao) return kExitUsage;
    if (Status s = checkTextOutput(o.output); !s.ok()) { // before the analysis, not after
        printMessage("report", s.message());
        return kExitUsage;
    }

    auto trace = analyzer::Trace::open(o.trace);
    if (!trace) {
        printMessage("report", trace.status().message());
        return kExitUsage;
    }
    Progress progress("analysing " + o.trace);
    auto analysis = analyzer::analyzeTrace(*trace, *ao);
    progress.finish();
    if (!analysis) {
        printMessage("report", analysis.status().message());
        return kExitUsage;
    }
    // The report's JSON document only for gates to read: it is as large as a JSON report (tens
    // of MB for a long multi-rank trace's steps), and --format json builds its own.
    Result<std::vector<report::GateResult>> results = std::vector<report::GateResult>();
    if (!gates.empty()) results = report::evaluateGates(report::reportJson(*analysis), gates);
    if (!results) {
        printMessage("report", results.status().message());
        return kExitUsage;
    }
    const bool written = writeOutputWith(o.output, [&](const OutputSink& sink) {
        return report::writeReportTo(format, *analysis, *results, wo, sink);
    }, "report");
    if (!written) return kExitUsage;
    return sayFailedGates(*results) ? report::kExitGateFailed : 0;
}

} // namespace hpcprof::cli
