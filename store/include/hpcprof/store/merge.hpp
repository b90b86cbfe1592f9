// SPDX-License-Identifier: MIT
// The store step: a run's raw directory -> one .hpcprof trace. Processes are converted one at a
// time (memory bounded by one process's data), clocks mapped to one time base, data problems
// counted in the stats table. `hpcprof run` calls it when the command ends; `hpcprof merge`
// calls it by hand.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"
#include "hpcprof/schema/io_group.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

struct MergeOptions {
    std::filesystem::path rawDir;
    std::filesystem::path output;
    bool force = false;           ///< replace an existing trace
    uint64_t fallbackTscHz = 0;   ///< TSC frequency when a process left no usable calibration
    std::string command;          ///< the wrapped command line, for metadata
    /// Fail when rawDir holds no readable process folder (`hpcprof merge`: the folder is not a
    /// capture); `hpcprof run` writes an empty trace instead (its command ran, unprofiled).
    bool requireProcesses = false;
    /// Realtime ns when `hpcprof run` ended the job (--timeout, SIGUSR1), 0 = it did not: the
    /// processes it ended were seen until then (their unfinished calls end there).
    int64_t stoppedRealtimeNs = 0;
    /// Called on the merging thread as the conversion goes: ("process", i, n) after process i
    /// of n, ("indexes", 0, 0) while the trace's indexes are built. For progress displays.
    std::function<void(const char* step, int64_t done, int64_t total)> onProgress;
    /// Event rows packed into SQLite's pages below SQL (TraceWriterOptions::eventPages); false
    /// writes them with INSERTs, the reference the tests compare the pages with.
    bool eventPages = true;
};

struct MergeResult {
    int64_t processes = 0;
    int64_t rankProcesses = 0;
    int64_t threads = 0;
    int64_t events = 0;
    StatCounts stats{};
    bool partial = false;              ///< some data is known to be missing (see stats)
    std::vector<std::string> warnings; ///< one human-readable line per problem
    /// The trace's I/O per process, function and file, summed while it was written (the run
    /// summary's input: analyzer::summarizeIo gives the same from the trace file).
    std::vector<schema::IoGroup> io;
};

/// Converts `options.rawDir` into the trace `options.output`. The trace is written to a
/// temporary file and renamed into place only when complete.
Result<MergeResult> mergeRawDirectory(const MergeOptions& options);

} // namespace hpcprof::store
