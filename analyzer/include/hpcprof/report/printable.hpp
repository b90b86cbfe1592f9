// SPDX-License-Identifier: MIT
/// The display form of text that comes from a trace or a command line (names, paths, messages):
/// what every report format and every message of the CLI writes, so that any bytes in a name
/// give valid UTF-8 output (JSON that parses, well-formed JUnit XML) and never reach a terminal as
/// a control sequence. User documentation: docs/reports.md, "Names with unusual bytes".
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hpcprof::report {

/// `s` with each byte that is not part of valid UTF-8, and each byte of a control character
/// (U+0000-U+001F, U+007F, U+0080-U+009F) or of a non-character U+FFFE / U+FFFF, written as the
/// four characters \xNN (NN: the byte in upper-case hex). A line feed is kept when
/// `keepNewlines` (whole reports), escaped otherwise (one-line messages). Everything else,
/// including any valid non-ASCII text, is unchanged.
std::string printable(std::string_view s, bool keepNewlines = false);

/// Whether printable(s, keepNewlines) would return `s` unchanged.
bool isPrintable(std::string_view s, bool keepNewlines = false);

/// Applies printable() to every string value and object key of `doc`, in place (line feeds
/// are kept: JSON escapes them itself).
void makePrintable(nlohmann::json& doc);

} // namespace hpcprof::report
