// SPDX-License-Identifier: MIT
#include "hpcprof/schema/file_io.hpp"

#include <unistd.h>

#include <cerrno>

namespace hpcprof::schema::fileio {

namespace {

/// `n` bytes through `call(p, n, at)` (one of the four system calls), retrying short and
/// interrupted calls; `at` < 0: at the file position.
template <typename Byte, typename Call>
size_t transfer(Byte* p, size_t n, off_t at, bool writing, Call call) {
    size_t done = 0;
    while (done < n) {
        const ssize_t k = call(p + done, n - done, at < 0 ? at : at + off_t(done));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = writing ? ENOSPC : 0; // a write that makes no progress; the end of a read
            break;
        }
        done += size_t(k);
    }
    return done;
}

} // namespace

size_t pwriteFull(int fd, const void* data, size_t n, off_t at) {
    return transfer(static_cast<const char*>(data), n, at, true,
                    [fd](const char* p, size_t k, off_t o) { return ::pwrite(fd, p, k, o); });
}

size_t preadFull(int fd, void* data, size_t n, off_t at) {
    return transfer(static_cast<char*>(data), n, at, false,
                    [fd](char* p, size_t k, off_t o) { return ::pread(fd, p, k, o); });
}

size_t writeFull(int fd, const void* data, size_t n) {
    return transfer(static_cast<const char*>(data), n, -1, true,
                    [fd](const char* p, size_t k, off_t) { return ::write(fd, p, k); });
}

size_t readFull(int fd, void* data, size_t n) {
    return transfer(static_cast<char*>(data), n, -1, false, [fd](char* p, size_t k, off_t) { return ::read(fd, p, k); });
}

} // namespace hpcprof::schema::fileio
