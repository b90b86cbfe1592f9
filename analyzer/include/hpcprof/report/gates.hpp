// SPDX-License-Identifier: MIT
/// CI gates: `--fail-on 'METRIC OP NUMBER'`, where METRIC is a dotted path into the JSON report
/// (docs/report-schema.json), looked up at the document root and then under `summary`
/// (so `comm.exposed_pct` means `summary.comm.exposed_pct`, `pop.load_balance` the root's `pop`).
/// A gate fails when its expression is true. Grammar: docs/reports.md.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::report {

/// Exit code of `hpcprof report` / `hpcprof diff` when a gate fails.
inline constexpr int kExitGateFailed = 3;

enum class GateOp { Greater, GreaterEqual, Less, LessEqual, Equal, NotEqual };

struct Gate {
    std::string text;   ///< as written
    std::string metric; ///< dotted path
    GateOp op = GateOp::Greater;
    double threshold = 0;
};

struct GateResult {
    Gate gate;
    double value = 0;
    bool failed = false; ///< the expression is true
};

/// Parses "comm.exposed_pct > 25"; a clear error for anything else.
Result<Gate> parseGate(const std::string& text);

/// The number at a metric path (root first, then under "summary"); empty if there is none.
std::optional<double> lookupMetric(const nlohmann::json& doc, const std::string& metric);

/// Evaluates the gates against a report document; an unknown metric is an error that names it.
Result<std::vector<GateResult>> evaluateGates(const nlohmann::json& doc, const std::vector<Gate>& gates);

/// "<", ">=", ...
const char* gateOpText(GateOp op);

} // namespace hpcprof::report
