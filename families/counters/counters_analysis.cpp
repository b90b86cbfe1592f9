// SPDX-License-Identifier: MIT
// The counters family's part of the analysis: once the ranks' windows and breakdowns are known,
// their CPU counters (utilisation, run-queue wait, switches, IPC; busy threads per host; see
// docs/counters.md). Rules: oversubscription, low IPC, shared cores.
#include "family_analysis.hpp"
#include "hpcprof/analyzer/counters.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> counterRules(); // counters_rules.cpp
}

namespace {

class CountersAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return "counters"; }
    Status conclude(AnalysisContext& ctx, Analysis& an) const override {
        an.counters = analyzeCounters(ctx.trace, an);
        return {};
    }
    std::vector<advice::RuleSpec> rules() const override { return advice::counterRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeCountersAnalysis() { return std::make_unique<CountersAnalysis>(); }

} // namespace hpcprof::analyzer
