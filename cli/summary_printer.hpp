// SPDX-License-Identifier: MIT
// Prints the post-run summary (wall time, I/O per process, top files, data problems).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "hpcprof/analyzer/io_summary.hpp"

namespace hpcprof::cli {

void printIoSummary(std::FILE* out, const std::string& tracePath,
                    const analyzer::IoSummary& summary);

/// The summary `hpcprof run` prints after the conversion, from the I/O totals the conversion
/// summed (`io`): the trace's process and stats tables are read, never its events.
void printRunSummary(std::FILE* out, const std::string& tracePath,
                     const std::vector<schema::IoGroup>& io);
/// The same summary for a trace whose conversion totals are not at hand (a merge of per-node
/// shards): one pass over the trace's I/O events.
void printTraceSummary(std::FILE* out, const std::string& tracePath);

/// "1.23 s", "45.6 ms", "789 us", "12 ns".
std::string formatDuration(int64_t ns);
/// "1.5 GiB", "12.0 KiB", "17 B".
std::string formatBytes(int64_t bytes);

} // namespace hpcprof::cli
