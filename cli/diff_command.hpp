// SPDX-License-Identifier: MIT
// `hpcprof diff BASE NEW`: analyses two traces the same way and compares them per class, rank,
// kernel, collective and file; regressions above a threshold are flagged, gates exit with 3.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hpcprof::cli {

struct DiffCommandOptions {
    std::string base, next;
    std::string format = "text";
    std::string output;
    std::string window;
    std::vector<std::string> failOn;
    double thresholdPct = 5.0;
    int64_t minDeltaNs = 100'000;
    bool includeSetup = false; ///< POP rows on the whole window, MPI start-up included
};

CLI::App* addDiffSubcommand(CLI::App& app, DiffCommandOptions& options);
int diffCommand(const DiffCommandOptions& options);

} // namespace hpcprof::cli
