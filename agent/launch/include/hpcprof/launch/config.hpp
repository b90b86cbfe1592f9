// SPDX-License-Identifier: MIT
// Agent configuration, read once from environment variables the launcher sets. The variables,
// what each accepts and its fallback are listed in settings.def (and in docs/user-guide.md):
// a value outside its rule is never used, the fallback is.
#pragma once

#include <cstddef>
#include <cstdint>

#include "settings.hpp"
#include "sources.hpp"

namespace hpcprof::agent {

struct Config {
    char rawDir[1024] = {};
    bool enabled = false;
    uint32_t sources = ~0u;
    uint64_t threadBufferBytes = 1024ull << 20;
    uint64_t chunkBytes = 1024ull << 10;
    bool provisionHelper = true;
    uint64_t tscHz = 0;
    int64_t clockSkewNs = 0;
    const char* clockRequest = nullptr;
    uint32_t rdmaEventRate = 100000;
};

/// Parses the environment (allocation-free). A value its rule in settings.def rejects gives
/// the fallback; `hpcprof run` has already warned about it (once, not in every process).
Config readConfig();

/// Parses a comma-separated source list ("io,mpi"); returns 0 for an empty/unknown-only list.
/// Unknown names are skipped here (the agent must start whatever it is given); the CLI rejects
/// them with firstUnknownSource() before it starts anything.
uint32_t parseSources(const char* list);

/// The first name in `list` that is not a source or `all` (nullptr when every one is known);
/// *len receives its length.
const char* firstUnknownSource(const char* list, size_t* len);

} // namespace hpcprof::agent
