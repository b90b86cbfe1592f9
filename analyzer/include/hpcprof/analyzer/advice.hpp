// SPDX-License-Identifier: MIT
/// The advice rule engine: each rule looks at a finished Analysis (breakdowns, wait states,
/// facts) and may produce one Finding with its evidence, the ranks and events behind it, an
/// upper bound of the time it could save and a suggestion. Every rule is documented in
/// docs/advice-rules.md; every rule has a test trace that fires it and one that does not.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

struct Rule {
    std::string id;
    std::string title;
    std::function<std::optional<Finding>(const Analysis&)> evaluate;
};

/// All rules, in documentation order.
const std::vector<Rule>& ruleCatalog();

/// Runs every rule; findings sorted by estimated gain, descending (then id).
std::vector<Finding> runRules(const Analysis& analysis);

/// Severity from the gain relative to the runtime: critical >= 20 %, warning >= 5 %, else info.
Severity severityForGain(int64_t gainNs, int64_t runtimeNs);

/// Sets a finding's estimated gain, clamped to [0, runtime], and the severity it implies.
void setGain(Finding& f, const Analysis& a, int64_t gainNs);

/// A finding of rule `id` with its title, suggestion and gain (see setGain); rules add the
/// ranks and evidence.
Finding makeFinding(const Analysis& a, const char* id, const char* title, int64_t gainNs,
                    std::string suggestion);

} // namespace hpcprof::analyzer
