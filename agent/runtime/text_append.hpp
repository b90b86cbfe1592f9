// SPDX-License-Identifier: MIT
// Builds paths and numbers into caller buffers without libc: usable in signal handlers, before
// libc is ready, and on the provisioning helper (which must not call into libc at all).
#pragma once

#include <cstdint>

namespace hpcprof::agent {

/// Appends `text` at `out`, NUL-terminates, returns the new end.
inline char* appendText(char* out, const char* text) {
    while (*text) *out++ = *text++;
    *out = 0;
    return out;
}

/// Appends decimal `v` at `out`, NUL-terminates, returns the new end.
inline char* appendNumber(char* out, int64_t v) {
    char tmp[24];
    int n = 0;
    bool neg = v < 0;
    uint64_t u = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
    do {
        tmp[n++] = char('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg) *out++ = '-';
    while (n) *out++ = tmp[--n];
    *out = 0;
    return out;
}

/// <procDir>/thread-<tid>: the raw file of one thread (see raw_format.hpp).
inline char* appendThreadFilePath(char* out, const char* procDir, int32_t tid) {
    return appendNumber(appendText(appendText(out, procDir), "/thread-"), tid);
}

/// <procDir>/thread-spare-<n>: a thread file made ahead of the thread that takes it
/// (provisioner.hpp); its header names the thread.
inline char* appendSpareFilePath(char* out, const char* procDir, int32_t n) {
    return appendNumber(appendText(appendText(out, procDir), "/thread-spare-"), n);
}

} // namespace hpcprof::agent
