// SPDX-License-Identifier: MIT
// Whole transfers between a buffer and a descriptor. read/write/pread/pwrite may move fewer
// bytes than asked (a signal, a pipe, a file system's limit per call) or fail with EINTR; every
// loop over them in the tools (not the agent) goes through these, so that all retry alike.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace hpcprof::schema::fileio {

/// What O_DIRECT wants aligned to it: buffers, file offsets and lengths (the logical block size
/// of the file systems we meet; 4 KiB covers 512-byte ones too).
constexpr size_t kDirectIoAlign = 4096;

/// Bytes of `n` written to `fd` at offset `at`: all of them, or fewer after a failure (errno
/// says which; a write of 0 bytes reads as ENOSPC).
size_t pwriteFull(int fd, const void* data, size_t n, off_t at);
/// Bytes of `n` read from `fd` at offset `at`: all of them, or fewer at the end of the file
/// (errno 0) or after a failure (errno).
size_t preadFull(int fd, void* data, size_t n, off_t at);
/// As pwriteFull and preadFull, at and moving the descriptor's file position.
size_t writeFull(int fd, const void* data, size_t n);
size_t readFull(int fd, void* data, size_t n);

inline bool pwriteAll(int fd, const void* data, size_t n, off_t at) { return pwriteFull(fd, data, n, at) == n; }
inline bool preadAll(int fd, void* data, size_t n, off_t at) { return preadFull(fd, data, n, at) == n; }
inline bool writeAll(int fd, const void* data, size_t n) { return writeFull(fd, data, n) == n; }

} // namespace hpcprof::schema::fileio
