// SPDX-License-Identifier: MIT
// The hpcprof command line: one table registers every subcommand (run, merge, report, diff,
// import, export, view, rules) and runs the one chosen.
#include <malloc.h>
#include <signal.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/analyzer/class_summary.hpp"
#include "hpcprof/config.hpp"
#include "hpcprof/schema/output_file.hpp"
#include "build_info.hpp"
#include "completion.hpp"
#include "diff_command.hpp"
#include "export_command.hpp"
#include "import_command.hpp"
#include "messages.hpp"
#include "progress.hpp"
#include "status_command.hpp"
#include "hpcprof/store/merge.hpp"
#include "hpcprof/store/shards.hpp"
#include "raw_dir_claim.hpp"
#include "report_command.hpp"
#include "rules_command.hpp"
#include "run_command.hpp"
#include "view_command.hpp"
#include "pack_command.hpp"

using namespace hpcprof;
namespace fs = std::filesystem;

namespace {

struct MergeCommandOptions {
    std::string rawDir;
    std::string output;
    bool force = false;
    std::string node; ///< write a shard of this node (node-local raw data -> shard)
    bool lanes = false; ///< also build the GUI's class summary (TRACE.lanes)
    int threads = 0;    ///< of a shard merge (0: the machine's cores)
};

CLI::App* addMergeCommand(CLI::App& app, MergeCommandOptions& o) {
    auto* cmd = app.add_subcommand(
        "merge", "Convert a raw capture directory into a trace, or merge per-node shards into one");
    cmd->add_option("rawdir", o.rawDir,
                    "Raw directory (TRACE.raw, or a node's raw folder), or a shards folder "
                    "(TRACE.shards/<job>: its shard-*.hpcprof are merged)")
        ->required();
    cmd->add_option("--node", o.node, "Write a shard of this node (e.g. node2) instead of a trace");
    cmd->add_option("-o,--output", o.output, "Trace file to write")->required();
    cmd->add_flag("--force", o.force, "Replace an existing trace");
    cmd->add_flag("--lanes", o.lanes, cli::kLanesFlagHelp);
    cmd->add_option("-j,--threads", o.threads, "Threads of a shard merge (0: the machine's cores)")
        ->check(CLI::NonNegativeNumber);
    return cmd;
}

/// `hpcprof merge T.shards/<job> -o T`: the shards there into one trace, partial when nodes are
/// missing (the metadata names them).
int mergeShardsCommand(const MergeCommandOptions& o, std::vector<fs::path> shards) {
    store::ShardMergeOptions so;
    so.shards = std::move(shards);
    so.output = o.output;
    so.force = o.force;
    so.threads = o.threads;
    auto r = store::mergeShards(so);
    if (!r) {
        cli::printMessage("merge", r.status().message());
        return cli::kExitUsage;
    }
    for (const auto& w : r->warnings) cli::printMessage("merge", "warning: " + w);
    if (o.lanes) analyzer::keepClassSummary(o.output); // best effort: the GUI's first screen reads it (docs/gui.md)
    std::string missing;
    if (!r->missingNodes.empty() || !r->missingRanks.empty()) {
        std::string ranks;
        for (int64_t rank : r->missingRanks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
        std::string nodes;
        for (const auto& n : r->missingNodes) nodes += (nodes.empty() ? "" : ",") + n;
        missing = fmt::format(" (partial: missing nodes {}; ranks {})", nodes.empty() ? "-" : nodes,
                              ranks.empty() ? "-" : ranks);
    } else if (r->partial) {
        missing = " (partial: see stats)";
    }
    cli::printMessage("merge", fmt::format("{} shards, {} processes, {} events -> {}{}", r->shards,
                                           r->processes, r->events, o.output, missing));
    return 0;
}

/// The shards of `folder` (TRACE.shards/<job>), or of its one job folder (TRACE.shards).
std::vector<fs::path> shardsIn(const fs::path& folder) {
    std::vector<fs::path> shards = store::listShards(folder);
    std::error_code ec;
    std::vector<fs::path> jobs;
    for (const auto& e : fs::directory_iterator(folder, ec))
        if (e.is_directory(ec) && e.path().filename().string()[0] != '.') jobs.push_back(e.path());
    if (shards.empty() && jobs.size() == 1) shards = store::listShards(jobs.front());
    return shards;
}

int mergeCommand(const MergeCommandOptions& o) {
    const std::string& rawDir = o.rawDir;
    const std::string& output = o.output;
    // The run that made the folder may still be writing it; while merging, hold its lock so
    // that no new run with that output can claim it either.
    cli::MergeGuard guard = cli::guardRawDirForMerge(rawDir);
    if (!guard.refusal.empty()) {
        cli::printMessage("merge", guard.refusal);
        return cli::kExitUsage;
    }
    std::error_code ec;
    bool ownRawDir = guard.claim.held() && (fs::equivalent(guard.claim.root(), output + ".raw", ec) ||
                                            fs::equivalent(guard.claim.root(), output + ".shards", ec));
    if (std::string busy = ownRawDir ? std::string() : cli::outputBeingWritten(output); !busy.empty()) {
        cli::printMessage("merge", busy);
        return cli::kExitUsage;
    }
    if (auto shards = shardsIn(rawDir); !shards.empty() && o.node.empty())
        return mergeShardsCommand(o, std::move(shards));
    store::MergeOptions mo;
    mo.rawDir = rawDir;
    mo.output = output;
    mo.force = o.force;
    mo.requireProcesses = true;
    cli::Progress progress("converting " + rawDir);
    mo.onProgress = [&progress](const char* step, int64_t done, int64_t total) {
        progress.update(step, done, total);
    };
    auto r = o.node.empty() ? store::mergeRawDirectory(mo)
                            : store::convertShard(mo, store::ShardIdentity{o.node, 0, 0});
    progress.finish();
    if (!r) {
        cli::printMessage("merge", r.status().message());
        return cli::kExitUsage;
    }
    for (const auto& w : r->warnings) cli::printMessage("merge", "warning: " + w);
    if (o.lanes && o.node.empty()) analyzer::keepClassSummary(output); // best effort (docs/gui.md)
    cli::printMessage("merge", fmt::format("{} processes, {} threads, {} events -> {}{}",
                                           r->processes, r->threads, r->events, output,
                                           r->partial ? " (partial: see stats)" : ""));
    return 0;
}

/// Import and export never race a running hpcprof run for the same output file (merge checks
/// inside, where it may hold that run's lock itself): the exit code of a refusal, else 0.
int refuseOutputBeingWritten(const char* command, const std::string& output) {
    if (std::string busy = cli::outputBeingWritten(output); !busy.empty()) {
        cli::printMessage(command, busy);
        return cli::kExitUsage;
    }
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

/// A subcommand as main sees it: the node its add function registered on the app (parsed():
/// the user chose it) and its run function, bound to the options CLI11 parses into.
struct Subcommand {
    CLI::App* cmd = nullptr;
    std::function<int()> run;
    /// run: the signals go on to the command, which hpcprof waits for. The other commands remove
    /// the temporary file they were writing and die of the signal.
    bool passesSignalsOn = false;
};

/// Registers a subcommand with `add` on options that live as long as the entry.
template <class Options>
Subcommand subcommand(CLI::App& app, CLI::App* (*add)(CLI::App&, Options&),
                      std::type_identity_t<std::function<int(const Options&)>> run,
                      bool passesSignalsOn = false) {
    auto options = std::make_shared<Options>();
    CLI::App* cmd = add(app, *options);
    return {cmd, [options, run = std::move(run)] { return run(*options); }, passesSignalsOn};
}

std::string commandLine(int argc, char** argv) {
    std::string line = "hpcprof";
    for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
    return line;
}

/// Every subcommand, in the order `hpcprof --help` lists them.
std::vector<Subcommand> registerSubcommands(CLI::App& app, const std::string& line) {
    std::vector<Subcommand> all;
    all.push_back(subcommand(app, cli::addRunCommand, cli::runCommand, /*passesSignalsOn=*/true));
    all.push_back(subcommand(app, addMergeCommand, mergeCommand));
    all.push_back(subcommand(app, cli::addReportSubcommand, cli::reportCommand));
    all.push_back(subcommand(app, cli::addDiffSubcommand, cli::diffCommand));
    all.push_back(subcommand(app, cli::addImportCommand, [line](const cli::ImportCommandOptions& o) {
        if (int refused = refuseOutputBeingWritten("import", o.output)) return refused;
        return cli::importCommand(o, line);
    }));
    all.push_back(subcommand(app, cli::addExportCommand, [](const cli::ExportCommandOptions& o) {
        if (int refused = refuseOutputBeingWritten("export", o.output)) return refused;
        return cli::exportCommand(o);
    }));
    all.push_back(subcommand(app, cli::addViewCommand, cli::viewCommand));
    all.push_back(subcommand(app, cli::addPackCommand, cli::packCommand));
    all.push_back(subcommand(app, cli::addRulesCommand, cli::rulesCommand));
    all.push_back(subcommand(app, cli::addStatusCommand, cli::statusCommand));
    // Last: the script it prints covers every subcommand registered above.
    all.push_back(subcommand(app, cli::addCompletionCommand, [&app](const cli::CompletionOptions&) {
        fmt::print("{}", cli::bashCompletion(app));
        return 0;
    }));
    return all;
}

/// Parses the command line; an exit code when there is nothing to run (help, version, a usage
/// error, already printed).
std::optional<int> parseArguments(CLI::App& app, int argc, char** argv) {
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
    return std::nullopt;
}

/// The analyses build and drop large vectors rank after rank (interval sets, a rank's calls).
/// With glibc's defaults each one over a few MiB is a fresh mapping, returned on free and
/// faulted in again, zeroed, for the next rank: 20 % of a report's CPU time was the kernel's.
/// Freed memory up to these sizes stays with the process for reuse instead (peak memory is
/// still the largest rank's; issue 22 measured both).
void keepFreedMemory() {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int runChosen(const std::vector<Subcommand>& subcommands) {
    for (const Subcommand& s : subcommands) {
        if (!s.cmd->parsed()) continue;
        if (!s.passesSignalsOn) cleanUpOnSignals();
        return s.run();
    }
    return cli::kExitUsage;
}

} // namespace

int main(int argc, char** argv) {
    // Named, not argv[0]: usage lines (and the man pages made from them) say "hpcprof run",
    // not the path the binary was started from.
    CLI::App app{"hpcprof: profile distributed HPC and ML jobs without recompiling them", "hpcprof"};
    app.set_version_flag("--version", cli::versionText());
    app.require_subcommand(1);
    const std::vector<Subcommand> subcommands = registerSubcommands(app, commandLine(argc, argv));
    if (std::optional<int> done = parseArguments(app, argc, argv)) return *done;
    // The commands report failures as Status; an exception escaping one (out of memory on a
    // hostile input, a library that throws) still ends in one line and exit 2, not in abort().
    keepFreedMemory();
    try {
        return runChosen(subcommands);
    } catch (const std::bad_alloc&) {
        cli::printMessage(app.get_subcommands().front()->get_name(), "out of memory");
    } catch (const std::exception& e) {
        cli::printMessage(app.get_subcommands().front()->get_name(),
                          std::string("internal error: ") + e.what());
    }
    return cli::kExitUsage;
}
