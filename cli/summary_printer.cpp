// SPDX-License-Identifier: MIT
#include "summary_printer.hpp"

#include <fmt/format.h>

#include "hpcprof/report/printable.hpp"

namespace hpcprof::cli {

std::string formatDuration(int64_t ns) {
    double v = double(ns);
    if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", v / 1e9);
    if (ns >= 1'000'000) return fmt::format("{:.2f} ms", v / 1e6);
    if (ns >= 1'000) return fmt::format("{:.1f} us", v / 1e3);
    return fmt::format("{} ns", ns);
}

std::string formatBytes(int64_t bytes) {
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) return fmt::format("{} B", bytes);
    double v = double(bytes);
    int u = -1;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        ++u;
    }
    return fmt::format("{:.1f} {}", v, kUnits[u]);
}

namespace {

/// How the summary names a process: its rank, else its program (the command's first word
/// without its folder), so that a process without a rank is not an anonymous "-".
std::string processName(const analyzer::ProcessIo& p) {
    if (p.rank) return fmt::format("rank {}", *p.rank);
    std::string program = p.command.substr(0, p.command.find(' '));
    if (auto slash = program.rfind('/'); slash != std::string::npos) program = program.substr(slash + 1);
    return program.empty() ? std::string("-") : report::printable(program);
}

} // namespace

// File paths come from the profiled program and may hold any bytes: they are printed in their
// display form (report::printable, docs/reports.md), never as control sequences.
void printIoSummary(std::FILE* out, const std::string& tracePath,
                    const analyzer::IoSummary& s) {
    using report::printable;
    fmt::print(out, "hpcprof: trace written to {}\n", printable(tracePath));
    fmt::print(out, "hpcprof: wall time {}, {} process{}, {} events\n", formatDuration(s.wallNs),
               s.processes, s.processes == 1 ? "" : "es", s.events);
    if (!s.perProcess.empty()) {
        fmt::print(out, "  {:<16} {:>8} {:>12} {:>12} {:>7} {:>10} {:>11} {:>11}\n", "process",
                   "pid", "wall", "in I/O", "I/O %", "I/O calls", "read", "written");
        for (const auto& p : s.perProcess) {
            // A process that exec()ed is one row, named by its last program, its time and I/O
            // from its first image on.
            std::string who = processName(p);
            double pct = p.wallNs > 0 ? 100.0 * double(p.ioNs) / double(p.wallNs) : 0.0;
            fmt::print(out, "  {:<16} {:>8} {:>12} {:>12} {:>6.1f}% {:>10} {:>11} {:>11}\n", who,
                       p.pid, formatDuration(p.wallNs), formatDuration(p.ioNs), pct, p.calls,
                       formatBytes(p.bytesRead), formatBytes(p.bytesWritten));
        }
    }
    if (!s.topFiles.empty()) {
        // A file's time counts every call on it, also those made inside other calls (hwloc
        // reading /sys inside MPI_Init); a process's "in I/O" only its outermost calls, so the
        // files can add up to more than the processes.
        fmt::print(out, "  top files by time in I/O (every call, also those inside other calls such as MPI_Init):\n");
        for (const auto& f : s.topFiles)
            fmt::print(out, "    {:>12} {:>7} calls  read {:>10}  written {:>10}  {} [{}]\n",
                       formatDuration(f.ioNs), f.calls, formatBytes(f.bytesRead),
                       formatBytes(f.bytesWritten), printable(f.path), printable(f.kind));
    }
    for (const auto& p : s.problems)
        fmt::print(out, "hpcprof: {}: {} = {} ({})\n",
                   p.severity == "info" ? "note" : p.severity == "data_loss" ? "DATA LOSS" : "ERROR",
                   p.name, p.value, p.description);
}

namespace {

void printSummaryOrWhy(std::FILE* out, const std::string& tracePath,
                       const Result<analyzer::IoSummary>& summary) {
    if (summary)
        printIoSummary(out, tracePath, summary.value());
    else
        fmt::print(out, "hpcprof: trace written to {} (summary failed: {})\n",
                   report::printable(tracePath), report::printable(summary.status().message()));
}

} // namespace

void printRunSummary(std::FILE* out, const std::string& tracePath,
                     const std::vector<schema::IoGroup>& io) {
    auto trace = analyzer::Trace::open(tracePath);
    printSummaryOrWhy(out, tracePath, trace ? analyzer::summarizeIo(trace.value(), io)
                                            : Result<analyzer::IoSummary>(trace.status()));
}

void printTraceSummary(std::FILE* out, const std::string& tracePath) {
    auto trace = analyzer::Trace::open(tracePath);
    printSummaryOrWhy(out, tracePath, trace ? analyzer::summarizeIo(trace.value())
                                            : Result<analyzer::IoSummary>(trace.status()));
}

} // namespace hpcprof::cli
