// SPDX-License-Identifier: MIT
// The process table's rows: which process owns each rank, and a process's row from its header
// (identity, rank, command, lifetime, end state, clock placement).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "process_clock.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

/// Which process owns each rank when several claim it from the environment (a wrapper script
/// and the program it starts both inherit OMPI_COMM_WORLD_RANK): the one MPI confirmed, else
/// the one with the most records, else the earliest. The others become non-rank processes.
std::vector<bool> rankOwners(const std::vector<RawProcess>& procs);

/// True when the process never reached a clean exit (killed or crashed).
bool endedAbnormally(const schema::raw::ProcessHeader& h);

/// The row of process `p` (id `processId`) whose last activity ends at `lastEnd` (trace ns).
ProcessRow processRow(const RawProcess& p, int64_t processId, bool ownsRank, const ProcessClock& clock,
                      int64_t lastEnd, std::optional<int64_t> parentProcessId);

} // namespace hpcprof::store
