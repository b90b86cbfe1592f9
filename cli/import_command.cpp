// SPDX-License-Identifier: MIT
#include "import_command.hpp"

#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/import/importer.hpp"
#include "messages.hpp"
#include "progress.hpp"
#include "run_command.hpp"

namespace hpcprof::cli {

CLI::App* addImportCommand(CLI::App& app, ImportCommandOptions& o) {
    auto* cmd = app.add_subcommand(
        "import", "Convert PyTorch profiler (Kineto) / Chrome trace JSON files into a trace");
    cmd->add_option("inputs", o.inputs,
                    "Trace files (.json or .json.gz), one per rank, or directories of them")
        ->required();
    cmd->add_option("-o,--output", o.output, "Trace file to write")->required();
    cmd->add_option("--align", o.align,
                    "Clock alignment across ranks: recorded (as the files say) or collectives "
                    "(match NCCL collective kernels)")
        ->check(CLI::IsMember({"recorded", "collectives"}))
        ->capture_default_str();
    cmd->add_flag("--force", o.force, "Replace an existing trace");
    cmd->add_flag("--keep-partial", o.keepPartial,
                  "Keep the events read before a damaged part of a file instead of failing");
    cmd->add_flag("-q,--quiet", o.quiet, "No progress and no summary");
    return cmd;
}

namespace {

import::ImportOptions importOptions(const ImportCommandOptions& o, const std::string& commandLine) {
    import::ImportOptions io;
    for (const auto& in : o.inputs) io.inputs.emplace_back(in);
    io.output = o.output;
    io.force = o.force;
    io.keepPartial = o.keepPartial;
    io.align = o.align == "collectives" ? import::ClockAlignment::Collectives
                                        : import::ClockAlignment::Recorded;
    io.command = commandLine;
    return io;
}

} // namespace

int importCommand(const ImportCommandOptions& o, const std::string& commandLine) {
    import::ImportOptions io = importOptions(o, commandLine);
    // -q: not even on a terminal.
    std::optional<Progress> progress;
    if (!o.quiet) progress.emplace("importing");
    if (progress)
        io.progress = [&progress](const import::ImportProgress& p) {
            int pct = p.fileSize ? int(100.0 * double(p.fileBytesRead) / double(p.fileSize)) : 0;
            progress->update(fmt::format("file {}/{} {}%", p.fileIndex + 1, p.fileCount, pct));
        };
    auto r = import::importTraces(io);
    if (progress) progress->finish();
    if (!r) {
        printMessage("import", r.status().message());
        return kExitUsage;
    }
    for (const auto& w : r->warnings) printMessage("import", "warning: " + w);
    if (o.quiet) return 0;
    for (const auto& p : r->processes) {
        std::string rank = p.rank ? fmt::format("rank {}", *p.rank) : "no rank";
        std::string align;
        if (r->clockMethod == "nccl_collectives")
            align = p.aligned ? fmt::format(", clock offset {:+} ns from {} collectives (spread "
                                            "{} ns)",
                                            p.offsetNs, p.matches, p.spreadNs)
                              : ", not aligned";
        printMessage("import", fmt::format("{} ({}): {} events from {}{}", rank, p.rankSource,
                                           p.events, p.file, align));
    }
    int64_t problems = 0;
    for (size_t i = 0; i < r->stats.size(); ++i)
        if (r->stats[i]) {
            fmt::print(stderr, "hpcprof import: {} {}: {}{}\n", r->stats[i],
                       schema::kStats[i].name, schema::kStats[i].description,
                       r->statDetails[i].empty() ? "" : "; " + report::printable(r->statDetails[i]));
            ++problems;
        }
    printMessage("import", fmt::format("{} files, {} processes, {} events -> {}{}", r->files,
                                       r->processes.size(), r->events, o.output,
                                       r->partial ? " (partial: see stats)" : ""));
    return 0;
}

} // namespace hpcprof::cli
