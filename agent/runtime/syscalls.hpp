// SPDX-License-Identifier: MIT
// Raw system calls for the agent's own file work. They bypass libc's exported wrappers, so the
// agent's I/O never reaches its own hooks (and never shows up in the trace).
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hpcprof::agent::sys {

inline int open(const char* path, int flags, int mode = 0) {
    return int(::syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}
inline int close(int fd) { return int(::syscall(SYS_close, fd)); }
inline ssize_t read(int fd, void* buf, size_t n) { return ::syscall(SYS_read, fd, buf, n); }
inline ssize_t write(int fd, const void* buf, size_t n) { return ::syscall(SYS_write, fd, buf, n); }
inline int ftruncate(int fd, off_t length) { return int(::syscall(SYS_ftruncate, fd, length)); }
inline int mkdir(const char* path, mode_t mode) {
    return int(::syscall(SYS_mkdirat, AT_FDCWD, path, mode));
}
inline int fstat(int fd, struct stat* st) { return int(::syscall(SYS_fstat, fd, st)); }
inline ssize_t readlink(const char* path, char* buf, size_t n) {
    return ::syscall(SYS_readlinkat, AT_FDCWD, path, buf, n);
}
inline pid_t gettid() { return pid_t(::syscall(SYS_gettid)); }

} // namespace hpcprof::agent::sys
