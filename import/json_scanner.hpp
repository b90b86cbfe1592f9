// SPDX-License-Identifier: MIT
// Finds where one JSON value ends without parsing it: bracket depth outside strings, strings
// with their escapes skipped, scalars up to the next delimiter. The fast reader uses it to hold
// a whole top-level member (anything but the event array) before nlohmann parses it; it is
// checked for structure only (nlohmann validates the contents afterwards). Also the UTF-8
// checks of the read blocks.
#pragma once

#include <cstddef>

namespace hpcprof::import {

struct ScanResult {
    enum class Kind : unsigned char { Complete, NeedMore, Error };
    Kind kind = Kind::Complete;
    size_t end = 0;            ///< Complete: one past the value's last byte
    size_t errorAt = 0;        ///< Error: offset of the offending byte
    const char* what = "";     ///< Error: what is wrong
};

/// Readable bytes the scanner may touch past `size` (it loads 64 bytes at a time).
inline constexpr size_t kScanPadding = 64;

/// Scans the value starting at data[pos] (not whitespace). NeedMore: the value does not end
/// within data[0, size) and more input may follow (`atEof` false); at the end of input an
/// unfinished string or container is an Error. A scalar ends at whitespace, ',', ']', '}' or
/// ':'. Control characters inside strings are an Error (JSON requires them escaped).
ScanResult scanValue(const char* data, size_t size, size_t pos, bool atEof);

/// The longest prefix of data[0, size) that does not end inside a multi-byte UTF-8 character
/// (what can be checked before the rest of the character is read).
size_t utf8CompletePrefix(const char* data, size_t size);

/// Offset of the first byte that is not valid UTF-8 (simdjson's vectorised check, then a
/// byte walk only when it fails), or `size` when all is valid.
size_t findInvalidUtf8(const char* data, size_t size);

inline bool isJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

} // namespace hpcprof::import
