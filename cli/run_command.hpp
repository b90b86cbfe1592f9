// SPDX-License-Identifier: MIT
// `hpcprof run`: runs a command with the agent preloaded, passes its stdio, signals and exit code
// through, then converts the raw capture into a trace and prints a summary on stderr.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hpcprof::cli {

struct RunOptions {
    std::string output;            ///< trace path; empty = fresh hpcprof-<timestamp>.hpcprof
    std::string sources = "all";   ///< comma list of capture sources
    bool force = false;            ///< replace an existing trace
    std::string counters;          ///< HPCPROF_COUNTERS (docs/counters.md); empty = default
    std::string counterPeriodMs;   ///< HPCPROF_COUNTER_PERIOD_MS; empty = default
    bool keepRaw = false;          ///< keep the raw directory after conversion
    bool lanes = false;            ///< also build the GUI's class summary (TRACE.lanes) after conversion
    bool quiet = false;            ///< no summary
    std::string rawDir;            ///< per-rank launch on nodes: node-local raw base (--raw-dir)
    std::string timeout;           ///< --timeout DURATION: end the job after it (job_stop.hpp)
    std::vector<std::string> command;
};

/// Exit codes of hpcprof itself (the wrapped command's own code passes through otherwise).
/// `--lanes` of run and merge (docs/gui.md, "Speed at scale").
inline constexpr const char* kLanesFlagHelp =
    "Also build the GUI's class summary (TRACE.lanes) now, so that the first opening of a big "
    "trace is instant (about 0.3 CPU-s per million events; else the GUI builds it once)";
inline constexpr int kExitUsage = 2;          ///< bad flags, unwritable output, ...
inline constexpr int kExitTraceFailed = 125;  ///< the command succeeded but no trace was written
inline constexpr int kExitCannotExecute = 126;
inline constexpr int kExitNotFound = 127;

/// Registers the subcommand and its options on `app`.
CLI::App* addRunCommand(CLI::App& app, RunOptions& options);
int runCommand(const RunOptions& options);

} // namespace hpcprof::cli
