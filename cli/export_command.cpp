// SPDX-License-Identifier: MIT
#include "export_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/analyzer/chrome_export.hpp"
#include "messages.hpp"
#include "progress.hpp"
#include "run_command.hpp"

namespace hpcprof::cli {

CLI::App* addExportCommand(CLI::App& app, ExportCommandOptions& o) {
    auto* cmd = app.add_subcommand(
        "export", "Write a trace in another format (chrome: for Perfetto's UI, chrome://tracing)");
    cmd->add_option("trace", o.trace, "Trace file to read")->required();
    cmd->add_option("--format", o.format, "Output format")
        ->check(CLI::IsMember({"chrome"}))
        ->capture_default_str();
    cmd->add_option("-o,--output", o.output, "Output file (FILE.json, or FILE.json.gz to compress)")
        ->required();
    cmd->add_option("--window", o.window,
                    "Export only events overlapping START:END (trace time; units ns, us, ms, s; "
                    "default ns; either side may be empty), e.g. 1.5s:2s");
    cmd->add_flag("--force", o.force, "Replace an existing output file");
    return cmd;
}

int exportCommand(const ExportCommandOptions& o) {
    analyzer::ChromeExportOptions eo;
    eo.output = o.output;
    eo.force = o.force;
    if (!o.window.empty()) {
        auto colon = o.window.find(':');
        if (colon == std::string::npos) {
            printMessage("export", "--window wants START:END, got '" + o.window + "'");
            return kExitUsage;
        }
        std::string start = o.window.substr(0, colon), end = o.window.substr(colon + 1);
        if (!start.empty()) eo.windowStartNs = analyzer::parseDuration(start);
        if (!end.empty()) eo.windowEndNs = analyzer::parseDuration(end);
        if ((!start.empty() && !eo.windowStartNs) || (!end.empty() && !eo.windowEndNs) ||
            (eo.windowStartNs && eo.windowEndNs && *eo.windowEndNs <= *eo.windowStartNs)) {
            printMessage("export", "bad --window '" + o.window + "' (e.g. 1.5s:2s, 0:500ms)");
            return kExitUsage;
        }
    }
    auto trace = analyzer::Trace::open(o.trace);
    if (!trace) {
        printMessage("export", trace.status().message());
        return kExitUsage;
    }
    Progress progress("exporting " + o.trace);
    auto r = analyzer::exportChromeTrace(*trace, eo);
    progress.finish();
    if (!r) {
        printMessage("export", r.status().message());
        return kExitUsage;
    }
    printMessage("export", fmt::format("{} processes, {} tracks, {} events, {} flow points -> {}",
                                       r->processes, r->tracks, r->events, r->flows, o.output));
    return 0;
}

} // namespace hpcprof::cli
