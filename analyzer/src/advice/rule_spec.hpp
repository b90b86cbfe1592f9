// SPDX-License-Identifier: MIT
// The advice rules as a table of specs (internal). A rule is its documentation (RuleInfo: id,
// condition, gain, evidence, suggestion, thresholds) plus the few functions that decide it.
// Most rules blame a time per rank: `loss` gives it (0 = the rank does not show the problem),
// and the engine does the rest the same way for all of them: the finding fires when some rank
// loses time, its gain is the largest loss (scaled by `gainScale`), its ranks are the ranks
// with a loss (largest first, at most 8), then the rule's evidence and example events. Rules
// that judge the job as a whole (imbalance, stragglers, counters, RDMA) give `judge` instead.
// Each rule's thresholds are constants of its file, used by its code and listed once in its
// info.parameters, from which the reference (docs/advice-rules.md) is generated.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer::advice {

/// What a whole-job rule found: its gain (before clamping to the runtime), ranks, evidence and
/// example events.
struct Judgement {
    int64_t gainNs = 0;
    std::vector<int64_t> ranks;
    std::vector<Evidence> evidence;
    std::vector<int64_t> eventIds;
    /// Time the change would save on each rank, by index of Analysis::ranks (for the exclusive
    /// gain); empty = gainNs on every rank.
    std::vector<int64_t> rankClaimNs;
    /// Compute the change takes off some ranks, by index of Analysis::ranks (the CPU time
    /// oversubscribed ranks wait for a core, a straggler's work beyond the others'), claimed from
    /// Compute whatever the rule's classes; empty = none.
    std::vector<int64_t> rankComputeClaimNs;
};

struct RuleSpec {
    RuleInfo info;
    /// Time a rank loses to the problem, 0 when it does not show it.
    std::function<int64_t(const RankBreakdown&, const Analysis&)> loss;
    /// A job-level condition checked before the per-rank losses (empty: none).
    std::function<bool(const Analysis&)> gate;
    double gainScale = 1.0; ///< gain = gainScale x the largest loss
    std::function<std::vector<Evidence>(const Analysis&)> evidence;
    std::vector<const char*> exampleKeys; ///< RankFacts::examples of the listed ranks
    /// Whole-job rules: the judgement, nullopt when the rule does not fire.
    std::function<std::optional<Judgement>(const Analysis&)> judge;
    /// The part of a rank's loss its change removes, for the exclusive gain (empty: the loss).
    std::function<int64_t(const RankBreakdown&, const Analysis&)> claim;
    /// The time classes a rank's blamed time lies in, the first drawn first (exclusive gain:
    /// rule_engine.cpp); empty = the rank's whole window.
    std::vector<TimeClass> claims;
    /// The judgement also claims compute (Judgement::rankComputeClaimNs), whatever `claims` says:
    /// listed first in the reference's claims.
    bool claimsCompute = false;
    /// The compute claimed is work moved to other ranks (rebalancing a straggler's excess), not
    /// work removed: no other finding claims it again, but it stays in the floor of compute the
    /// findings together cannot save (rule_engine.cpp).
    bool computeMoves = false;
    /// Which part of a rank's communication a Communication claim draws from: the wait for late
    /// partners the wait-state analysis measured (imbalance, stragglers), the rest of it
    /// (transfer: what overlapping or bigger messages remove), or both.
    enum class CommPart { Any, Transfer, Wait };
    CommPart commPart = CommPart::Any;
    /// A cause that stretches the time other rules blame (more busy threads than CPUs makes
    /// communication and compute slower alike): its finding comes first, so that the others
    /// claim only what it leaves and the report starts with the cause, not its symptoms.
    bool rootCause = false;
};

/// Every rule in reference order: the core's, then each registered family's.
const std::vector<RuleSpec>& ruleSpecs();

/// Runs every rule; findings sorted root causes first, then by estimated gain, descending (then
/// id), each with its exclusive gain.
std::vector<Finding> runRules(const Analysis& analysis);

/// Severity from the gain relative to the runtime (threshold::kCriticalGainShare, ...).
Severity severityForGain(int64_t gainNs, int64_t runtimeNs);

// Helpers the rules share.
double share(int64_t part, int64_t whole);
/// The largest per-rank value.
int64_t maxOver(const Analysis& a, const std::function<int64_t(const RankBreakdown&)>& value);
/// A rank's compute in the part of the window T is measured on (POP metrics), the compute the
/// exclusive gains draw from.
int64_t usefulNs(const RankBreakdown& r, const Analysis& a);
/// The breakdown of rank `rank`; nullptr when the analysis has none.
const RankBreakdown* rankBreakdownOf(const Analysis& a, int64_t rank);
/// Claims of a rule that saves a share of some ranks' compute (rank -> share): per rank, by
/// index of Analysis::ranks, that share of its useful compute, at most `capNs`; 0 elsewhere.
std::vector<int64_t> computeShareClaims(const Analysis& a, const std::map<int64_t, double>& shareByRank,
                                        int64_t capNs);

/// The core's rules (load imbalance); the data families give theirs (family_analysis.hpp).
std::vector<RuleSpec> balanceRules();
/// The core's rule about ranks waiting for their worker processes.
std::vector<RuleSpec> workerRules();

} // namespace hpcprof::analyzer::advice
