// SPDX-License-Identifier: MIT
#include "rules_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "hpcprof/analyzer/advice.hpp"

namespace hpcprof::cli {

CLI::App* addRulesCommand(CLI::App& app, RulesCommandOptions& o) {
    auto* cmd = app.add_subcommand("rules", "List the advice rules, their conditions and thresholds");
    cmd->add_option("--format", o.format, "md (the rule reference) or json")
        ->check(CLI::IsMember({"md", "json"}))
        ->capture_default_str();
    return cmd;
}

int rulesCommand(const RulesCommandOptions& o) {
    const std::string text = o.format == "json" ? analyzer::ruleReferenceJson()
                                                : analyzer::ruleReferenceMarkdown();
    fmt::print("{}", text);
    return 0;
}

} // namespace hpcprof::cli
