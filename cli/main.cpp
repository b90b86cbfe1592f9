// SPDX-License-Identifier: MIT
// The hpcprof command line: run, merge (more subcommands register here as they arrive).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/config.hpp"
#include "diff_command.hpp"
#include "export_command.hpp"
#include "import_command.hpp"
#include "messages.hpp"
#include "merge.hpp"
#include "report_command.hpp"
#include "run_command.hpp"
#include "summary_printer.hpp"
#include "view_command.hpp"

using namespace hpcprof;

namespace {

int mergeCommand(const std::string& rawDir, const std::string& output, bool force) {
    store::MergeOptions mo;
    mo.rawDir = rawDir;
    mo.output = output;
    mo.force = force;
    mo.requireProcesses = true;
    auto r = store::mergeRawDirectory(mo);
    if (!r) {
        cli::printMessage("merge", r.status().message());
        return cli::kExitUsage;
    }
    for (const auto& w : r->warnings) cli::printMessage("merge", "warning: " + w);
    cli::printMessage("merge", fmt::format("{} processes, {} threads, {} events -> {}{}",
                                           r->processes, r->threads, r->events, output,
                                           r->partial ? " (partial: see stats)" : ""));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"hpcprof: profile distributed HPC and ML jobs without recompiling them"};
    app.set_version_flag("--version", std::string("hpcprof ") + HPCPROF_VERSION);
    app.require_subcommand(1);

    cli::RunOptions run;
    auto* runCmd = app.add_subcommand("run", "Run a command under the profiler and write a trace");
    runCmd->add_option("-o,--output", run.output, "Trace file (default: hpcprof-<time>.hpcprof)");
    runCmd->add_option("--sources", run.sources, "Comma list of sources to record: io, mpi, socket, rdma, cuda, nvtx, nccl, nccl_plugin, all")
        ->capture_default_str();
    runCmd->add_option("--counters", run.counters,
                       "CPU counters: default, software, none, or names (PAPI_TOT_INS,task_clock,...)");
    runCmd->add_option("--counter-period", run.counterPeriodMs, "Counter timer period in ms (0 = off)");
    runCmd->add_flag("--force", run.force, "Replace an existing trace");
    runCmd->add_flag("--keep-raw", run.keepRaw, "Keep the raw capture directory (TRACE.raw)");
    runCmd->add_flag("-q,--quiet", run.quiet, "Do not print the summary");
    runCmd->add_option("command", run.command, "The command to run, after --")->required();
    runCmd->positionals_at_end();

    std::string rawDir, mergeOut;
    bool mergeForce = false;
    auto* mergeCmd = app.add_subcommand("merge", "Convert a raw capture directory into a trace");
    mergeCmd->add_option("rawdir", rawDir, "Raw directory (TRACE.raw)")->required();
    mergeCmd->add_option("-o,--output", mergeOut, "Trace file to write")->required();
    mergeCmd->add_flag("--force", mergeForce, "Replace an existing trace");

    cli::ReportOptions reportOpts;
    auto* reportCmd = cli::addReportSubcommand(app, reportOpts);
    cli::DiffCommandOptions diffOpts;
    auto* diffCmd = cli::addDiffSubcommand(app, diffOpts);

    cli::ImportCommandOptions importOptions;
    auto* importCmd = cli::addImportCommand(app, importOptions);
    cli::ExportCommandOptions exportOptions;
    auto* exportCmd = cli::addExportCommand(app, exportOptions);
    cli::ViewCommandOptions viewOptions;
    auto* viewCmd = cli::addViewCommand(app, viewOptions);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "hpcprof: {}\n", report::printable(e.what()));
        fmt::print(stderr, "hpcprof: see 'hpcprof --help'\n");
        return cli::kExitUsage;
    }
    // The commands report failures as Status; an exception escaping one (out of memory on a
    // hostile input, a library that throws) still ends in one line and exit 2, not in abort().
    try {
        if (runCmd->parsed()) return cli::runCommand(run);
        if (mergeCmd->parsed()) return mergeCommand(rawDir, mergeOut, mergeForce);
        if (importCmd->parsed()) {
            std::string line = "hpcprof";
            for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
            return cli::importCommand(importOptions, line);
        }
        if (exportCmd->parsed()) return cli::exportCommand(exportOptions);
        if (reportCmd->parsed()) return cli::reportCommand(reportOpts);
        if (diffCmd->parsed()) return cli::diffCommand(diffOpts);
        if (viewCmd->parsed()) return cli::viewCommand(viewOptions);
    } catch (const std::bad_alloc&) {
        cli::printMessage(app.get_subcommands().front()->get_name(), "out of memory");
    } catch (const std::exception& e) {
        cli::printMessage(app.get_subcommands().front()->get_name(),
                          std::string("internal error: ") + e.what());
    }
    return cli::kExitUsage;
}
