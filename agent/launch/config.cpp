// SPDX-License-Identifier: MIT
#include "hpcprof/launch/config.hpp"

#include <cstdlib>
#include <cstring>

namespace hpcprof::agent {

namespace {

/// Calls fn(name, len) for each non-empty item of a comma list.
template <typename Fn> void forEachItem(const char* list, Fn fn) {
    for (const char* p = list; p && *p;) {
        const char* comma = std::strchr(p, ',');
        size_t len = comma ? size_t(comma - p) : std::strlen(p);
        if (len > 0 && !fn(p, len)) return;
        p = comma ? comma + 1 : nullptr;
    }
}

} // namespace

uint32_t parseSources(const char* list) {
    uint32_t bits = 0;
    forEachItem(list, [&](const char* name, size_t len) {
        if (len == 3 && std::strncmp(name, "all", 3) == 0) bits = ~0u;
        for (const auto& s : kSources)
            if (std::strlen(s.name) == len && std::strncmp(name, s.name, len) == 0)
                bits |= uint32_t(s.bit);
        return true;
    });
    return bits;
}

const char* firstUnknownSource(const char* list, size_t* len) {
    const char* unknown = nullptr;
    forEachItem(list, [&](const char* name, size_t n) {
        if (acceptedWord(kSourceWords, name, n)) return true;
        unknown = name;
        *len = n;
        return false;
    });
    return unknown;
}

Config readConfig() {
    Config c;
    if (const char* dir = textSetting(Setting::RawDir); dir && std::strlen(dir) < sizeof(c.rawDir)) {
        std::strcpy(c.rawDir, dir);
        c.enabled = true;
    }
    // Unknown names are skipped: a list that names no known source records nothing, as asked.
    if (const char* s = std::getenv(settingSpec(Setting::Sources).variable); s && *s)
        c.sources = parseSources(s);
    // Both limits are range-checked before the shift: nothing can wrap.
    c.threadBufferBytes = uint64_t(numberSetting(Setting::ThreadBufferMb)) << 20;
    c.chunkBytes = uint64_t(numberSetting(Setting::ChunkKb)) << 10;
    c.provisionHelper = numberSetting(Setting::ProvisionHelper) != 0;
    c.chunkBytes &= ~uint64_t(4095); // whole pages (the smallest accepted value is one page)
    if (c.threadBufferBytes < c.chunkBytes) c.threadBufferBytes = c.chunkBytes;
    c.tscHz = uint64_t(numberSetting(Setting::TscHz));
    c.clockSkewNs = int64_t(numberSetting(Setting::ClockSkewNs));
    c.clockRequest = textSetting(Setting::Clock);
    c.rdmaEventRate = uint32_t(numberSetting(Setting::RdmaEventRate));
    return c;
}

} // namespace hpcprof::agent
