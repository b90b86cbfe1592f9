// SPDX-License-Identifier: MIT
#include "json_scanner.hpp"

#include <cstdint>

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hpcprof::import {

namespace {

ScanResult complete(size_t end) { return {ScanResult::Kind::Complete, end, 0, ""}; }
ScanResult needMore() { return {ScanResult::Kind::NeedMore, 0, 0, ""}; }
ScanResult error(size_t at, const char* what) { return {ScanResult::Kind::Error, 0, at, what}; }

constexpr const char* kControl = "invalid string: control character must be escaped";

ScanResult scanScalar(const char* data, size_t size, size_t pos, bool atEof) {
    for (size_t i = pos; i < size; ++i) {
        char c = data[i];
        if (isJsonSpace(c) || c == ',' || c == ']' || c == '}' || c == ':') return complete(i);
    }
    return atEof ? complete(size) : needMore();
}

/// Walks data[from, lim) byte by byte through strings and brackets, carrying inString and
/// depth: the portable path, and the vector path's blocks that hold a backslash. Returns the
/// value's end (Complete) or a control character inside a string (Error) if met there; else
/// NeedMore, with `next` where the walk stopped (past lim when an escape's backslash was last).
ScanResult walkBytes(const char* data, size_t from, size_t lim, bool& inString, size_t& depth,
                     size_t& next) {
    size_t i = from;
    for (; i < lim; ++i) {
        unsigned char c = static_cast<unsigned char>(data[i]);
        if (inString) {
            if (c == '"') {
                inString = false;
                if (depth == 0) return complete(i + 1);
            } else if (c == '\\') {
                ++i;
            } else if (c < 0x20) {
                return error(i, kControl);
            }
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return complete(i + 1);
        }
    }
    next = i;
    return needMore();
}

/// The rest of a string or container from pos, byte by byte.
ScanResult scanSlow(const char* data, size_t size, size_t pos, bool inString, size_t depth,
                    bool atEof) {
    size_t next = pos;
    ScanResult r = walkBytes(data, pos, size, inString, depth, next);
    if (r.kind != ScanResult::Kind::NeedMore) return r;
    return atEof ? error(size, "syntax error - unexpected end of input") : needMore();
}

/// Set bits (the builtin is a library call without -mpopcnt, which x86-64's baseline lacks).
inline size_t countBits(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return size_t((x * 0x0101010101010101ULL) >> 56);
}

#if defined(__SSE2__)
/// Bytes of a 16-byte load equal to `c`, as bits.
inline uint64_t eqMask(__m128i x, char c) {
    return uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(c)))));
}
#endif

} // namespace

ScanResult scanValue(const char* data, size_t size, size_t pos, bool atEof) {
    char first = data[pos];
    if (first == '"') return scanSlow(data, size, pos + 1, true, 0, atEof);
    if (first != '{' && first != '[') return scanScalar(data, size, pos, atEof);
    size_t depth = 1;
    bool inString = false;
#if defined(__SSE2__)
    // 64 bytes at a time: bit masks of quotes, brackets and control characters; which bytes are
    // inside strings follows from a prefix XOR of the quotes (as simdjson's stage 1 does), so
    // only the brackets outside strings are walked one by one. A block holding a backslash is
    // walked byte by byte instead (escapes are rare in traces).
    const __m128i ctrlMax = _mm_set1_epi8(0x1f);
    size_t p = pos + 1;
    while (p < size) {
        size_t avail = size - p;
        size_t n = avail < 64 ? avail : 64;
        uint64_t valid = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
        uint64_t quote = 0, backslash = 0, open = 0, close = 0, ctrl = 0;
        for (int k = 0; k < 4; ++k) {
            __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + p + 16 * k));
            int shift = 16 * k;
            quote |= eqMask(x, '"') << shift;
            backslash |= eqMask(x, '\\') << shift;
            open |= (eqMask(x, '{') | eqMask(x, '[')) << shift;
            close |= (eqMask(x, '}') | eqMask(x, ']')) << shift;
            ctrl |= uint64_t(unsigned(_mm_movemask_epi8(
                        _mm_cmpeq_epi8(_mm_max_epu8(x, ctrlMax), ctrlMax))))
                    << shift;
        }
        if (backslash & valid) {
            // An escape's backslash last in the block makes p step past it: the next block
            // starts after the escaped byte.
            ScanResult r = walkBytes(data, p, p + n, inString, depth, p);
            if (r.kind != ScanResult::Kind::NeedMore) return r;
            continue;
        }
        quote &= valid;
        uint64_t in = quote;
        in ^= in << 1;
        in ^= in << 2;
        in ^= in << 4;
        in ^= in << 8;
        in ^= in << 16;
        in ^= in << 32;
        uint64_t parity = in;
        if (inString) in = ~in;
        open &= ~in & valid;
        close &= ~in & valid;
        uint64_t upto = valid; // bytes of this value in the block
        size_t endBit = 64;
        if (close) {
            for (uint64_t m = open | close; m; m &= m - 1) {
                uint64_t bit = m & -m;
                if (open & bit) {
                    ++depth;
                } else if (--depth == 0) {
                    endBit = size_t(__builtin_ctzll(m));
                    upto &= (bit << 1) - 1;
                    break;
                }
            }
        } else {
            depth += countBits(open);
        }
        // Control characters count only inside this value's strings, not in what follows it.
        if (uint64_t bad = ctrl & in & upto)
            return error(p + size_t(__builtin_ctzll(bad)), kControl);
        if (endBit < 64) return complete(p + endBit + 1);
        if (parity >> 63) inString = !inString; // the prefix XOR's last bit: odd quote count
        p += n;
    }
    return atEof ? error(size, "syntax error - unexpected end of input") : needMore();
#else
    return scanSlow(data, size, pos + 1, inString, depth, atEof);
#endif
}

size_t utf8CompletePrefix(const char* data, size_t size) {
    // Back over at most three continuation bytes to the character's first byte.
    size_t i = size;
    for (int k = 0; k < 4 && i > 0; ++k) {
        unsigned char c = static_cast<unsigned char>(data[--i]);
        if ((c & 0xc0) == 0x80) continue;
        size_t need = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 1;
        return size - i >= need ? size : i;
    }
    return size; // no lead byte nearby: invalid anyway, let the check find it
}

namespace {

/// Well-formed UTF-8 sequences by their first byte (Unicode's table 3-7): the length, and the
/// range of the second byte (the later ones are 80..BF).
struct Utf8Lead {
    unsigned char first, last; ///< range of the first byte
    unsigned char length;
    unsigned char secondLo, secondHi;
};
constexpr Utf8Lead kUtf8Leads[] = {
    {0x00, 0x7f, 1, 0, 0},       {0xc2, 0xdf, 2, 0x80, 0xbf}, {0xe0, 0xe0, 3, 0xa0, 0xbf},
    {0xe1, 0xec, 3, 0x80, 0xbf}, {0xed, 0xed, 3, 0x80, 0x9f}, {0xee, 0xef, 3, 0x80, 0xbf},
    {0xf0, 0xf0, 4, 0x90, 0xbf}, {0xf1, 0xf3, 4, 0x80, 0xbf}, {0xf4, 0xf4, 4, 0x80, 0x8f},
};

/// Length of the well-formed sequence at s[i] (within s[0, size)); 0 when there is none.
size_t utf8SequenceAt(const unsigned char* s, size_t size, size_t i) {
    for (const Utf8Lead& l : kUtf8Leads) {
        if (s[i] < l.first || s[i] > l.last) continue;
        for (size_t k = 1; k < l.length; ++k) {
            unsigned char lo = k == 1 ? l.secondLo : 0x80, hi = k == 1 ? l.secondHi : 0xbf;
            if (i + k >= size || s[i + k] < lo || s[i + k] > hi) return 0;
        }
        return l.length;
    }
    return 0;
}

} // namespace

size_t findInvalidUtf8(const char* data, size_t size) {
    if (simdjson::validate_utf8(data, size)) return size;
    // Invalid somewhere: walk the sequences to the first byte that starts none.
    const auto* s = reinterpret_cast<const unsigned char*>(data);
    size_t i = 0;
    while (i < size) {
        size_t n = utf8SequenceAt(s, size, i);
        if (n == 0) return i;
        i += n;
    }
    return size;
}

} // namespace hpcprof::import
