// SPDX-License-Identifier: MIT
/// The short summary `hpcprof run` prints: wall time, time and bytes in I/O per process, top
/// files, and data-quality problems.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/schema/io_group.hpp"

namespace hpcprof::analyzer {

/// Whether an I/O function moves data in, out, or neither (open, close, seek, sync).
enum class IoDirection { Read, Write, None };

/// Direction of an intercepted I/O function by its name (read, pread64, fread, fgets -> Read).
IoDirection ioDirection(const std::string& functionName);

/// One operating-system process: its images before exec() are folded into the one that followed.
struct ProcessIo {
    int64_t processId = 0; ///< its latest image
    int64_t images = 1;    ///< 2 and more: the process exec()ed

    std::optional<int64_t> rank;
    int64_t pid = 0;
    std::string command;
    int64_t wallNs = 0;   ///< process start to end
    int64_t ioNs = 0;     ///< time inside I/O calls (outermost calls only, no double counting)
    int64_t calls = 0;
    int64_t bytesRead = 0;
    int64_t bytesWritten = 0;
};

struct FileIo {
    std::string path;
    std::string kind; ///< file, pipe, socket, device, ...
    int64_t calls = 0;
    int64_t ioNs = 0;
    int64_t bytesRead = 0;
    int64_t bytesWritten = 0;
};

struct StatProblem {
    std::string name, severity, description;
    int64_t value = 0;
};

struct IoSummary {
    int64_t wallNs = 0;
    int64_t processes = 0;
    int64_t events = 0;
    std::vector<ProcessIo> perProcess; ///< ranks first (by rank), then other processes by start
    std::vector<FileIo> topFiles;      ///< by time in I/O, descending
    std::vector<StatProblem> problems; ///< non-zero stats, worst first
};

/// Computes the summary; `topFiles` limits the file list.
Result<IoSummary> summarizeIo(const Trace& trace, size_t topFiles = 5);

/// The same from I/O totals already known (the trace writer's, store::MergeResult::io): reads
/// only the trace's process, track and stats tables, never its events.
Result<IoSummary> summarizeIo(const Trace& trace, const std::vector<schema::IoGroup>& io,
                              size_t topFiles = 5);

/// The I/O totals of a trace file, one row per process, function and file (one pass over its
/// events; what the trace writer sums while it writes them).
Result<std::vector<schema::IoGroup>> ioGroups(const Trace& trace);

} // namespace hpcprof::analyzer
