// SPDX-License-Identifier: MIT
#include "fd_table.hpp"

#include <fcntl.h>

#include <cerrno>

#include <cstring>

#include "collector/runtime/recorder.hpp"
#include "collector/runtime/syscalls.hpp"

namespace hpcprof::interpose {

namespace {
// Descriptors above this are recorded without an object (very rare; counted as unknown).
constexpr int kMaxFds = 1 << 16;
uint32_t g_objects[kMaxFds]; // atomic access only; 0 = not known yet

char* appendFdPath(char* out, int fd) {
    static constexpr char kPrefix[] = "/proc/self/fd/";
    std::memcpy(out, kPrefix, sizeof(kPrefix) - 1);
    out += sizeof(kPrefix) - 1;
    char digits[12];
    int n = 0;
    do {
        digits[n++] = char('0' + fd % 10);
        fd /= 10;
    } while (fd);
    while (n) *out++ = digits[--n];
    *out = 0;
    return out;
}

// What the kernel says the descriptor is: a path, "pipe:[ino]", "socket:[ino]", ...
uint32_t internFromProc(int fd) {
    char link[40];
    appendFdPath(link, fd);
    char target[4096];
    ssize_t n = collector::sys::readlink(link, target, sizeof(target));
    if (n <= 0) return 0;
    return collector::internString(target, size_t(n));
}
} // namespace

uint32_t fdObject(int fd) {
    if (fd < 0 || fd >= kMaxFds) return 0;
    uint32_t id = __atomic_load_n(&g_objects[fd], __ATOMIC_RELAXED);
    if (id) [[likely]] return id;
    int savedErrno = errno; // the caller's errno must survive this first-use readlink
    id = internFromProc(fd);
    if (id) __atomic_store_n(&g_objects[fd], id, __ATOMIC_RELAXED);
    errno = savedErrno;
    return id;
}

uint32_t fdOpened(int fd, const char* path, int dirfd) {
    if (fd < 0 || fd >= kMaxFds) return 0;
    uint32_t id = 0;
    // Absolute paths are kept as the program wrote them; relative ones are resolved by the
    // kernel so the trace names the file users know.
    if (path && path[0] == '/' && dirfd == AT_FDCWD)
        id = collector::internString(path, std::strlen(path));
    else {
        int savedErrno = errno;
        id = internFromProc(fd);
        errno = savedErrno;
    }
    __atomic_store_n(&g_objects[fd], id, __ATOMIC_RELAXED);
    return id;
}

void fdDuplicated(int oldFd, int newFd) {
    if (newFd < 0 || newFd >= kMaxFds) return;
    uint32_t id = (oldFd >= 0 && oldFd < kMaxFds) ? __atomic_load_n(&g_objects[oldFd], __ATOMIC_RELAXED) : 0;
    __atomic_store_n(&g_objects[newFd], id, __ATOMIC_RELAXED);
}

void fdClosed(int fd) {
    if (fd >= 0 && fd < kMaxFds) __atomic_store_n(&g_objects[fd], 0u, __ATOMIC_RELAXED);
}

} // namespace hpcprof::interpose
