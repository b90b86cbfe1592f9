// SPDX-License-Identifier: MIT
/// The versioned JSON report: the machine-readable form of an Analysis (and of a diff). Its
/// schema is docs/report-schema.json; the metric names of `--fail-on` are paths into it.
#pragma once

#include <nlohmann/json.hpp>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/diff.hpp"
#include "hpcprof/report/gates.hpp"

namespace hpcprof::report {

/// Bumped when a field changes meaning or disappears (adding fields keeps the version).
/// 2: set-up (MPI_Init, MPI_Finalize, communicator and window creation) is its own class, no
/// longer part of comm; POP metrics are computed between MPI_Init and MPI_Finalize (pop.region).
inline constexpr int kReportSchemaVersion = 2;

/// The report document without gates (gates are evaluated against it, then added).
nlohmann::json reportJson(const analyzer::Analysis& a);
/// Adds the `gates` array.
void addGates(nlohmann::json& doc, const std::vector<GateResult>& gates);

/// The diff document (`hpcprof diff --format json`).
nlohmann::json diffJson(const analyzer::AnalysisDiff& d);

} // namespace hpcprof::report
