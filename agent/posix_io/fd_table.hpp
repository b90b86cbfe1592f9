// SPDX-License-Identifier: MIT
// Which object (file path, pipe, socket) each file descriptor refers to, as an interned string
// id. Filled at open/dup, cleared at close, and resolved lazily (one readlink per descriptor) for
// descriptors the program got elsewhere: inherited stdout, pipe(), socket(), fcntl(F_DUPFD).
// Calls from a thread with a descriptor table of its own (the counter sampler, where PAPI opens
// and closes its descriptors) leave the map alone: their numbers mean nothing in the program's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpcprof::agent {

/// The object id of `fd`, resolving it once if unknown. Thread-safe, async-signal-safe.
uint32_t fdObject(int fd);

/// Records that `fd` was opened with `path` (relative to `dirfd` for openat).
uint32_t fdOpened(int fd, const char* path, int dirfd);

/// `newFd` now refers to what `oldFd` referred to.
void fdDuplicated(int oldFd, int newFd);

/// `fd` was closed (or is about to be).
void fdClosed(int fd);

} // namespace hpcprof::agent
