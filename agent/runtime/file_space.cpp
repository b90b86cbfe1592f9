// SPDX-License-Identifier: MIT
#include "file_space.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <atomic>
#include <cerrno>

#include "raw_syscall.hpp"

namespace hpcprof::agent {

static_assert(ENOSPC == 28 && EDQUOT == 122, "dropReasonFor() spells these out");

namespace {

std::atomic<bool> g_growByWriting{false};

alignas(4096) const char kZeros[4096] = {};

/// Writes zeros over [from, end) of `fd`. 0 or an errno.
int writeZeros(int fd, uint64_t from, uint64_t end) {
    constexpr int kPagesPerCall = 64;
    struct iovec iov[kPagesPerCall];
    for (auto& v : iov) v = {const_cast<char*>(kZeros), sizeof(kZeros)};
    while (from < end) {
        uint64_t want = end - from;
        int n = 0;
        uint64_t bytes = 0;
        for (; n < kPagesPerCall && bytes < want; ++n) {
            uint64_t piece = want - bytes < sizeof(kZeros) ? want - bytes : sizeof(kZeros);
            iov[n].iov_len = piece;
            bytes += piece;
        }
        long r = sysCall(SYS_pwritev, fd, long(iov), n, long(from), 0);
        for (int i = 0; i < n; ++i) iov[i].iov_len = sizeof(kZeros);
        if (r == -EINTR) continue;
        if (r < 0) return int(-r);
        if (r == 0) return ENOSPC; // nothing written and no error: treat as full
        from += uint64_t(r);
    }
    return 0;
}

} // namespace

int reserveFileSpace(int fd, uint64_t offset, uint64_t length, bool mayWrite) {
    if (!g_growByWriting.load(std::memory_order_relaxed)) {
        long r;
        do {
            r = sysCall(SYS_fallocate, fd, 0, long(offset), long(length));
        } while (r == -EINTR);
        if (r == 0) return 0;
        if (r != -EOPNOTSUPP && r != -ENOSYS) return int(-r);
        g_growByWriting.store(true, std::memory_order_relaxed);
    }
    if (!mayWrite) return EOPNOTSUPP;
    struct stat st;
    long r = sysCall(SYS_fstat, fd, long(&st));
    if (r < 0) return int(-r);
    // From the current end: everything before it is the file's own (mapped, maybe recorded).
    return writeZeros(fd, uint64_t(st.st_size), offset + length);
}

bool fileGrowsByWriting() { return g_growByWriting.load(std::memory_order_relaxed); }

} // namespace hpcprof::agent
