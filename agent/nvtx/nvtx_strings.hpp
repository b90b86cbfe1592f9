// SPDX-License-Identifier: MIT
// Range names without a string record per range: a small per-thread cache from a name's content
// hash to the id it was interned under, so a name used in a loop is written once per thread.
#pragma once

#include <cstdint>

namespace hpcprof::agent::nvtx {

/// Id of the NUL-terminated `text` (0 for nullptr or when it could not be recorded).
/// Thread-safe (per-thread cache), no allocation; cost is one pass over the text.
uint32_t internCached(const char* text);

/// The same for a wide string, converted to UTF-8 (names longer than 255 bytes are cut).
uint32_t internCachedWide(const wchar_t* text);

} // namespace hpcprof::agent::nvtx
