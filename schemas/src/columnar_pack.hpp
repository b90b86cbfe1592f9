// SPDX-License-Identifier: MIT
// The columnar packed form (docs/trace-schema.md "Packed traces"): a zstd skippable frame that
// names the layout, the trace without its event rows as one zstd frame, then one zstd frame per
// event column (column_stream.hpp), rows in id order.
#pragma once

#include <cstdio>
#include <string>

#include "hpcprof/status.hpp"

namespace hpcprof::schema::columnar {

/// Whether `head` (the file's first 8 bytes) starts a columnar packed trace.
bool isColumnar(const unsigned char* head);

/// Writes the columnar form of the plain trace `in` to `out`. Sets `applicable` false (writing
/// nothing) when an event value is not an integer or NULL, which the form cannot hold.
Status pack(const std::string& in, const std::string& out, int level, int threads, bool& applicable);

/// Restores the plain trace of the columnar file `path` (open as `in`) into the empty file `copy`
/// (open as `fd`): the rest's frame, then the events inserted back in id order.
Status unpack(std::FILE* in, const std::string& path, int fd, const std::string& copy);

} // namespace hpcprof::schema::columnar
