// SPDX-License-Identifier: MIT
// The capture sources (sources.def) as bits, names and one comma list of accepted words.
#pragma once

#include <cstdint>

namespace hpcprof::agent {

enum class SourceBit : uint32_t {
#define HPCPROF_SOURCE(id, name, bit, what) id = 1u << bit,
#include "sources.def"
#undef HPCPROF_SOURCE
};

struct SourceSpec {
    const char* name;
    SourceBit bit;
    const char* what;
};

inline constexpr SourceSpec kSources[] = {
#define HPCPROF_SOURCE(id, name, bit, what) {name, SourceBit::id, what},
#include "sources.def"
#undef HPCPROF_SOURCE
};

/// Every word --sources / HPCPROF_SOURCES accepts: the source names, then `all`.
inline constexpr char kSourceWords[] =
#define HPCPROF_SOURCE(id, name, bit, what) name ","
#include "sources.def"
#undef HPCPROF_SOURCE
    "all";

} // namespace hpcprof::agent
