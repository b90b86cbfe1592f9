// SPDX-License-Identifier: MIT
// `hpcprof report TRACE`: analyses a trace and writes the report (text, md, html, json, junit);
// `--fail-on` gates make it exit with 3 when a metric crosses its threshold (docs/reports.md).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hpcprof::cli {

struct ReportOptions {
    std::string trace;
    std::string format = "text";
    std::string output;               ///< empty = stdout
    std::string window;               ///< --window all | T0:T1 | range:NAME (default: steps or activity)
    std::string steps;                ///< --steps NAME: the step family (or "collectives")
    std::vector<std::string> failOn;  ///< gate expressions
    std::string junitSeverity = "warning";
    double linkGbps = 0;              ///< link bandwidth for the collective-bandwidth rule, GB/s
    double memoryGbps = 0;            ///< its copy bandwidth when all ranks share a host, GB/s
    bool includeSetup = false;        ///< POP metrics on the whole window, MPI start-up included
    bool allSteps = false;            ///< every rank's every step listed, however many
};

/// Registers the subcommand and its options on `app`.
CLI::App* addReportSubcommand(CLI::App& app, ReportOptions& options);
int reportCommand(const ReportOptions& options);

} // namespace hpcprof::cli
