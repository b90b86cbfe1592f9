// SPDX-License-Identifier: MIT
// `hpcprof completion bash`: the bash completion script, generated from the CLI11 option table
// itself, so that it cannot drift from what hpcprof accepts.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct CompletionOptions {
    std::string shell = "bash";
};

CLI::App* addCompletionCommand(CLI::App& app, CompletionOptions& o);
/// The script for every subcommand registered on `app` (call after all are registered).
std::string bashCompletion(const CLI::App& app);

} // namespace hpcprof::cli
