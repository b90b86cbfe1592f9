// SPDX-License-Identifier: MIT
// zstd frames to and from files, shared by the whole-file and columnar packed forms.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "hpcprof/status.hpp"

namespace hpcprof::schema::zstdfile {

/// Compresses the rest of `in` as one frame (with its size when `pledged` > 0 and a checksum)
/// appended to `out`; `written` gets the frame's size.
Status compress(std::FILE* in, std::FILE* out, int level, int threads, uint64_t pledged,
                uint64_t& written);

/// Decompresses frames read from `in` into `fd`: up to `limit` compressed bytes (UINT64_MAX: to
/// the end of the file); the error names `path` and what went wrong.
Status decompress(std::FILE* in, uint64_t limit, int fd, const std::string& path);

} // namespace hpcprof::schema::zstdfile
