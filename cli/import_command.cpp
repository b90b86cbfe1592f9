// SPDX-License-Identifier: MIT
#include "import_command.hpp"

#include <unistd.h>

#include <chrono>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/import/importer.hpp"
#include "messages.hpp"
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

int importCommand(const ImportCommandOptions& o, const std::string& commandLine) {
    import::ImportOptions io;
    for (const auto& in : o.inputs) io.inputs.emplace_back(in);
    io.output = o.output;
    io.force = o.force;
    io.keepPartial = o.keepPartial;
    io.align = o.align == "collectives" ? import::ClockAlignment::Collectives
                                        : import::ClockAlignment::Recorded;
    io.command = commandLine;
    bool tty = isatty(STDERR_FILENO);
    auto last = std::chrono::steady_clock::now();
    bool printed = false;
    if (!o.quiet && tty)
        io.progress = [&](const import::ImportProgress& p) {
            auto now = std::chrono::steady_clock::now();
            if (now - last < std::chrono::milliseconds(500)) return;
            last = now;
            double pct = p.fileSize ? 100.0 * double(p.fileBytesRead) / double(p.fileSize) : 0;
            fmt::print(stderr, "\rhpcprof import: file {}/{} {:.0f}% ", p.fileIndex + 1,
                       p.fileCount, pct);
            printed = true;
        };
    auto r = import::importTraces(io);
    if (printed) fmt::print(stderr, "\r\033[K");
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
