// SPDX-License-Identifier: MIT
// `hpcprof import FILE|DIR... -o TRACE`: PyTorch profiler (Kineto) and Chrome trace JSON files,
// plain or gzip-compressed, one per rank, into one hpcprof trace.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct ImportCommandOptions {
    std::vector<std::string> inputs;
    std::string output;
    std::string align = "recorded"; ///< recorded | collectives
    bool force = false;
    bool keepPartial = false;
    bool quiet = false;
};

/// Registers the subcommand on `app`; returns it so main can tell whether it was chosen.
CLI::App* addImportCommand(CLI::App& app, ImportCommandOptions& options);

int importCommand(const ImportCommandOptions& options, const std::string& commandLine);

} // namespace hpcprof::cli
