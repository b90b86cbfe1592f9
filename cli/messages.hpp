// SPDX-License-Identifier: MIT
// One-line messages of the reading commands (report, diff, export, import, merge, view): what
// they print about a trace, a path or a name goes through report::printable(), so a file name
// with any bytes gives one line of UTF-8 on the terminal and never a control sequence.
#pragma once

#include <string_view>

#include <fmt/format.h>

#include "hpcprof/report/printable.hpp"

namespace hpcprof::cli {

/// Prints "hpcprof <command>: <message>" and a line feed to stderr, the message in its
/// display form (printable(): one line, no control characters, valid UTF-8).
inline void printMessage(std::string_view command, std::string_view message) {
    fmt::print(stderr, "hpcprof {}: {}\n", command, report::printable(message));
}

} // namespace hpcprof::cli
