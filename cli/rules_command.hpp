// SPDX-License-Identifier: MIT
// `hpcprof rules [--format md|json]`: the advice rules with their thresholds, from the rule
// table itself (the markdown form is docs/advice-rules.md).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct RulesCommandOptions {
    std::string format = "md";
};

CLI::App* addRulesCommand(CLI::App& app, RulesCommandOptions& options);

int rulesCommand(const RulesCommandOptions& options);

} // namespace hpcprof::cli
