// SPDX-License-Identifier: MIT
// `hpcprof import`: PyTorch profiler (Kineto) and Chrome trace JSON files -> one hpcprof trace.
// Files are read one at a time and streamed; each becomes one process (one rank), or, for files
// written by `hpcprof export`, the processes they list. Ranks can be aligned by their NCCL
// collectives. Data problems are counted in the trace's stats, never silently dropped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::import {

enum class ClockAlignment {
    Recorded,    ///< times as the files give them
    Collectives, ///< ranks shifted so that matching NCCL collectives end together
};

struct ImportProgress {
    size_t fileIndex = 0, fileCount = 0;
    std::string path;
    uint64_t fileBytesRead = 0; ///< on-disk bytes read so far
    uint64_t fileSize = 0;      ///< on-disk size
};

struct ImportOptions {
    std::vector<std::filesystem::path> inputs; ///< files (plain or .gz) or directories of them
    std::filesystem::path output;
    bool force = false;        ///< replace an existing trace
    bool keepPartial = false;  ///< keep what was read from a damaged file instead of failing
    ClockAlignment align = ClockAlignment::Recorded;
    std::string command;       ///< the import command line, for metadata
    std::function<void(const ImportProgress&)> progress;
};

struct ImportedProcess {
    int64_t processId = 0;
    std::optional<int64_t> rank;
    std::string rankSource;
    std::string file;
    int64_t events = 0;
    bool aligned = false;  ///< --align collectives found an offset (or this is the reference)
    int64_t offsetNs = 0;  ///< alignment offset applied
    int64_t matches = 0;   ///< collective instances the offset is based on
    int64_t spreadNs = 0;  ///< largest disagreement among those instances
};

struct ImportResult {
    int64_t files = 0;
    int64_t events = 0;
    std::vector<ImportedProcess> processes;
    store::StatCounts stats{};
    /// Per stat, the categories its events had: "mtia_insight 12, overhead 3" (stats that
    /// count events by category: unknown and not analysed categories).
    store::StatDetails statDetails{};
    std::vector<std::string> warnings;
    bool partial = false;     ///< some data is known to be missing (see stats)
    std::string clockMethod;  ///< recorded | nccl_collectives
};

/// Expands directories into the trace files they hold (*.json, *.json.gz), sorted by name.
Result<std::vector<std::filesystem::path>> listInputs(const std::vector<std::filesystem::path>& in);

/// Imports `options.inputs` into the new trace `options.output` (written to a temporary file and
/// renamed into place only when complete). Errors name the file and the position.
Result<ImportResult> importTraces(const ImportOptions& options);

} // namespace hpcprof::import
