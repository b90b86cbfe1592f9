// SPDX-License-Identifier: MIT
/// Writes a trace in the Chrome trace JSON format that Perfetto's UI and chrome://tracing open:
/// every process (rank) as a process, every track as a thread, events as complete ("X") events
/// with their category, bytes, peer and correlation in args, launch -> GPU work correlations as
/// flow arrows. The args also carry what `hpcprof import` needs to restore the trace exactly
/// (categories, track kinds, devices, streams, ranks). Streams track by track; memory does not
/// grow with the trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer {

struct ChromeExportOptions {
    std::string output;                  ///< FILE.json, or FILE.json.gz for gzip output
    bool force = false;                  ///< replace an existing file
    std::optional<int64_t> windowStartNs; ///< keep events that end at or after this (trace ns)
    std::optional<int64_t> windowEndNs;   ///< ... and start before this
};

struct ChromeExportResult {
    int64_t processes = 0;
    int64_t tracks = 0;
    int64_t events = 0;
    int64_t flows = 0; ///< flow points written (one per correlated event)
};

/// Exports `trace` to `options.output` (written to a temporary file, renamed when complete).
Result<ChromeExportResult> exportChromeTrace(const Trace& trace, const ChromeExportOptions& options);

/// Parses a window bound: a number with an optional unit (ns, us, ms, s; default ns), e.g.
/// "1.5s", "250ms", "1000". Empty on malformed text.
std::optional<int64_t> parseDuration(const std::string& text);

} // namespace hpcprof::analyzer
