// SPDX-License-Identifier: MIT
// `-o FILE` of report and diff: checked before the analysis runs, written through a pending
// output (schema/output_file.hpp) so that a failure leaves neither a half-written report nor a
// temporary file. A device or FIFO (/dev/stdout, a named pipe) is written directly.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "hpcprof/status.hpp"

namespace hpcprof::cli {

/// Whether `path` can be written (empty = stdout: always); the message says why not.
Status checkTextOutput(const std::string& path);

/// Writes `text` to `path` (or stdout when empty); false with a message on stderr on failure.
bool writeOutput(const std::string& path, const std::string& text, const char* command);

/// Passes `produce` a sink that writes to `path` (or stdout when empty), for an output too large
/// to hold whole: a failure of the sink or of `produce` leaves no file, as writeOutput.
using OutputSink = std::function<bool(std::string_view)>;
bool writeOutputWith(const std::string& path, const std::function<bool(const OutputSink&)>& produce,
                     const char* command);

} // namespace hpcprof::cli
