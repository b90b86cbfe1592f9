// SPDX-License-Identifier: MIT
/// The advice rules as documentation: what each rule looks at, when it fires, the gain it
/// estimates, the evidence it gives and what it suggests, with its thresholds. This is the
/// source of docs/advice-rules.md (`hpcprof rules --format md` prints it; a test fails when the
/// file differs) and of `hpcprof rules --format json` for scripts.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hpcprof::analyzer {

/// One threshold of a rule, as the rule's code uses it.
struct RuleParameter {
    std::string name;  ///< as the condition text names it, e.g. "min_calls"
    double value = 0;
    std::string unit;  ///< count, ns, bytes, share (0..1), pct (0..100), ratio, per_s
};

/// A rule as documented.
struct RuleInfo {
    std::string id;
    std::string area;       ///< what data it needs: communication, io, gpu, counters, rdma, ...
    std::string title;      ///< the title of its findings
    std::string firesWhen;  ///< the condition, thresholds written as {name}
    std::string gain;       ///< how its estimated gain is computed
    std::string details;    ///< a paragraph for the reference: how it reads the data
    std::string suggestion; ///< what its findings suggest (any program)
    std::vector<std::string> evidence; ///< the evidence keys its findings carry
    std::vector<RuleParameter> parameters;
    bool severityFromGain = true; ///< else every finding is a warning (gain not estimated)
    /// Wording for one kind of program (Analysis::programKind: mpi, data_parallel, processes),
    /// used instead of `suggestion` when the trace shows that kind.
    std::map<std::string, std::string> suggestionFor = {};
    /// The time classes its blamed time is claimed from for the exclusive gain (empty = the
    /// whole window); filled from the rule table.
    std::vector<std::string> claims = {};
};

/// Every rule, in the order the reference lists them.
const std::vector<RuleInfo>& ruleReference();

/// docs/advice-rules.md, generated from ruleReference().
std::string ruleReferenceMarkdown();

/// The reference as JSON text (one object per rule, thresholds with their values and units).
std::string ruleReferenceJson();

} // namespace hpcprof::analyzer
