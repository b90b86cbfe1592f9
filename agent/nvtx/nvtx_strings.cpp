// SPDX-License-Identifier: MIT
#include "nvtx_strings.hpp"

#include <cstddef>

#include "runtime/recorder.hpp"

namespace hpcprof::agent::nvtx {

namespace {

// Direct-mapped: 64 entries of (64-bit content hash, id). Two different names colliding in all
// 64 bits is not a practical concern; two names sharing a slot just evict each other.
constexpr size_t kCacheSize = 64;
struct CacheEntry {
    uint64_t hash;
    uint32_t id;
};
thread_local CacheEntry t_cache[kCacheSize];

uint64_t fnv1a(const char* text, size_t* lenOut) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = 0;
    for (; text[n]; ++n) h = (h ^ uint8_t(text[n])) * 0x100000001b3ull;
    *lenOut = n;
    return h | 1; // never 0, so an empty slot never matches
}

uint32_t lookupOrIntern(const char* text) {
    size_t len = 0;
    uint64_t h = fnv1a(text, &len);
    CacheEntry& e = t_cache[(h >> 7) % kCacheSize];
    if (e.hash == h && e.id != 0) return e.id;
    uint32_t id = internString(text, len);
    if (id != 0) e = {h, id};
    return id;
}

// Appends the UTF-8 form of code point `c` if it fits.
size_t putUtf8(char* out, size_t at, size_t cap, uint32_t c) {
    char buf[4];
    size_t n;
    if (c < 0x80) {
        buf[0] = char(c);
        n = 1;
    } else if (c < 0x800) {
        buf[0] = char(0xc0 | (c >> 6));
        buf[1] = char(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        buf[0] = char(0xe0 | (c >> 12));
        buf[1] = char(0x80 | ((c >> 6) & 0x3f));
        buf[2] = char(0x80 | (c & 0x3f));
        n = 3;
    } else {
        buf[0] = char(0xf0 | (c >> 18));
        buf[1] = char(0x80 | ((c >> 12) & 0x3f));
        buf[2] = char(0x80 | ((c >> 6) & 0x3f));
        buf[3] = char(0x80 | (c & 0x3f));
        n = 4;
    }
    if (at + n > cap) return at;
    for (size_t i = 0; i < n; ++i) out[at + i] = buf[i];
    return at + n;
}

} // namespace

uint32_t internCached(const char* text) { return text ? lookupOrIntern(text) : 0; }

uint32_t internCachedWide(const wchar_t* text) {
    if (!text) return 0;
    char buf[256];
    size_t n = 0;
    for (size_t i = 0; text[i] && n < sizeof(buf) - 1; ++i) {
        size_t next = putUtf8(buf, n, sizeof(buf) - 1, uint32_t(text[i]));
        if (next == n) break;
        n = next;
    }
    buf[n] = 0;
    return lookupOrIntern(buf);
}

} // namespace hpcprof::agent::nvtx
