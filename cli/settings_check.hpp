// SPDX-License-Identifier: MIT
// The CLI side of settings.def and sources.def: warnings for bad HPCPROF_* values in the
// environment (the agent then uses the fallback), validators for numeric options, and the
// --sources help text and check. The rule itself lives in agent/launch/settings.cpp, so
// the CLI and the agent cannot disagree about what is valid.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hpcprof/launch/settings.hpp"

namespace hpcprof::cli {

/// "an integer from 4 to 1048576 (KB)", "one of: tsc, monotonic", ...
std::string describeRule(const agent::SettingSpec& spec);

/// One line per HPCPROF_* variable of this process's environment that its rule rejects:
/// "HPCPROF_CHUNK_KB=-5 is not valid (accepted: ...); using the default 1024".
std::vector<std::string> environmentWarnings();

/// A CLI11 check that accepts what the setting accepts (for --counter-period and the like).
CLI::Validator acceptedBy(agent::Setting setting);

/// A CLI11 check for a plain decimal number from min to max (no inf, nan or exponent).
CLI::Validator numberFrom(double min, double max, const std::string& unit, bool integer = false);

/// "io, mpi, socket, ..., all" from sources.def.
std::string sourceNamesText();

/// Empty when every name in a --sources list is known and it names at least one; else the
/// one-line reason, naming the known sources.
std::string checkSourceList(const std::string& list);

} // namespace hpcprof::cli
