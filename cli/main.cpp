// SPDX-License-Identifier: MIT
// The hpcprof command line: run, merge (more subcommands register here as they arrive).
#include <signal.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/config.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "diff_command.hpp"
#include "export_command.hpp"
#include "import_command.hpp"
#include "messages.hpp"
#include "hpcprof/store/merge.hpp"
#include "raw_dir_claim.hpp"
#include "report_command.hpp"
#include "rules_command.hpp"
#include "run_command.hpp"
#include "settings_check.hpp"
#include "summary_printer.hpp"
#include "view_command.hpp"

using namespace hpcprof;
namespace fs = std::filesystem;

namespace {

int mergeCommand(const std::string& rawDir, const std::string& output, bool force) {
    // The run that made the folder may still be writing it; while merging, hold its lock so
    // that no new run with that output can claim it either.
    cli::MergeGuard guard = cli::guardRawDirForMerge(rawDir);
    if (!guard.refusal.empty()) {
        cli::printMessage("merge", guard.refusal);
        return cli::kExitUsage;
    }
    std::error_code ec;
    bool ownRawDir = guard.claim.held() && fs::equivalent(guard.claim.root(), output + ".raw", ec);
    if (std::string busy = ownRawDir ? std::string() : cli::outputBeingWritten(output); !busy.empty()) {
        cli::printMessage("merge", busy);
        return cli::kExitUsage;
    }
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

// A command interrupted while writing its output leaves no temporary file behind.
void removeTemporariesAndDie(int sig) {
    schema::removePendingOutputsForSignal();
    signal(sig, SIG_DFL);
    raise(sig);
}

void cleanUpOnSignals() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        struct sigaction old{};
        sigaction(sig, nullptr, &old);
        if (old.sa_handler == SIG_IGN) continue; // nohup and the like stay in force
        struct sigaction sa{};
        sa.sa_handler = removeTemporariesAndDie;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, nullptr);
    }
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"hpcprof: profile distributed HPC and ML jobs without recompiling them"};
    app.set_version_flag("--version", std::string("hpcprof ") + HPCPROF_VERSION);
    app.require_subcommand(1);

    cli::RunOptions run;
    auto* runCmd = app.add_subcommand("run", "Run a command under the profiler and write a trace");
    runCmd->add_option("-o,--output", run.output, "Trace file (default: hpcprof-<time>.hpcprof)");
    runCmd->add_option("--sources", run.sources,
                       "Comma list of sources to record: " + cli::sourceNamesText())
        ->capture_default_str();
    runCmd->add_option("--counters", run.counters,
                       "CPU counters: default, software, none, or names (PAPI_TOT_INS,task_clock,...)");
    runCmd->add_option("--counter-period", run.counterPeriodMs, "Counter timer period in ms (0 = off)")
        ->check(cli::acceptedBy(collector::Setting::CounterPeriodMs));
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
    cli::RulesCommandOptions rulesOptions;
    auto* rulesCmd = cli::addRulesCommand(app, rulesOptions);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "hpcprof: {} (see 'hpcprof --help')\n", report::printable(e.what()));
        return cli::kExitUsage;
    }
    // The commands report failures as Status; an exception escaping one (out of memory on a
    // hostile input, a library that throws) still ends in one line and exit 2, not in abort().
    try {
        if (runCmd->parsed()) return cli::runCommand(run);
        cleanUpOnSignals();
        if (mergeCmd->parsed()) return mergeCommand(rawDir, mergeOut, mergeForce);
        for (auto [cmd, output] : {std::pair{importCmd, importOptions.output},
                                   std::pair{exportCmd, exportOptions.output}})
            if (cmd->parsed())
                if (std::string busy = cli::outputBeingWritten(output); !busy.empty()) {
                    cli::printMessage(cmd->get_name(), busy);
                    return cli::kExitUsage;
                }
        if (importCmd->parsed()) {
            std::string line = "hpcprof";
            for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
            return cli::importCommand(importOptions, line);
        }
        if (exportCmd->parsed()) return cli::exportCommand(exportOptions);
        if (reportCmd->parsed()) return cli::reportCommand(reportOpts);
        if (diffCmd->parsed()) return cli::diffCommand(diffOpts);
        if (viewCmd->parsed()) return cli::viewCommand(viewOptions);
        if (rulesCmd->parsed()) return cli::rulesCommand(rulesOptions);
    } catch (const std::bad_alloc&) {
        cli::printMessage(app.get_subcommands().front()->get_name(), "out of memory");
    } catch (const std::exception& e) {
        cli::printMessage(app.get_subcommands().front()->get_name(),
                          std::string("internal error: ") + e.what());
    }
    return cli::kExitUsage;
}
