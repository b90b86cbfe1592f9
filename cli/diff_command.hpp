// SPDX-License-Identifier: MIT
// `hpcprof diff BASE NEW`: analyses two traces the same way and compares them per class, rank,
// kernel, collective and file (files by their path relative to the run's working directory);
// changes beyond the noise floor are regressions or improvements, gates exit with 3.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "hpcprof/analyzer/diff.hpp"

namespace hpcprof::cli {

struct DiffCommandOptions {
    std::string base, next;
    std::string format = "text";
    std::string output;
    std::string window;
    std::string steps; ///< --steps NAME (hpcprof report --steps)
    std::vector<std::string> failOn;
    analyzer::DiffOptions floor; ///< the noise floor (defaults: analyzer/diff.hpp)
    bool includeSetup = false; ///< POP rows on the whole window, MPI start-up included
};

CLI::App* addDiffSubcommand(CLI::App& app, DiffCommandOptions& options);
int diffCommand(const DiffCommandOptions& options);

} // namespace hpcprof::cli
