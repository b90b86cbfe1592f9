// SPDX-License-Identifier: MIT
// Internal: what each process of a trace is (docs/analysis.md, "Process roles"), and which
// analysed unit (rank or main process) a worker belongs to.
#pragma once

#include <optional>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::analyzer::detail {

struct ProcessRoles {
    std::vector<ProcessRole> role;              ///< by index in TraceIndex::processes()
    std::vector<std::optional<size_t>> parent;  ///< index of the recorded parent
    /// Ranks and main processes: themselves; workers: the rank or main process that started
    /// them (through any chain of workers); launchers and others: none.
    std::vector<std::optional<size_t>> owner;
    bool anyRank = false;
};

/// A launcher or daemon by its command: mpirun, mpiexec, orted, prted, srun, torchrun, ...
bool isLauncherCommand(const std::string& command);

/// `launchersAnalysed`: a trace of launchers only (`srun hostname` without ranks) analyses
/// them as main processes rather than nothing.
ProcessRoles processRoles(const std::vector<ProcessInfo>& processes, bool launchersAnalysed = false);

} // namespace hpcprof::analyzer::detail

namespace hpcprof::analyzer {
class Trace;
}

namespace hpcprof::analyzer::detail {

/// Adds to each worker's entry (by process index) its parent's blocking calls waiting for it:
/// waits that reaped it, reads of a pipe or socket it wrote to (process_waits.cpp).
Status waitsForWorkers(const Trace& trace, const std::vector<ProcessInfo>& processes, const ProcessRoles& roles,
                       std::vector<ProcessEntry>& entries);

} // namespace hpcprof::analyzer::detail
