// SPDX-License-Identifier: MIT
// File-descriptor I/O hooks: open/creat/read/write/pread/pwrite/readv/writev and their 64-bit
// and _FORTIFY_SOURCE forms, lseek, fsync, fdatasync, ftruncate, close, dup.
//
// Every hook: noexcept, no allocation, no lock; errno and the return value are exactly the real
// call's. Thread-safe and async-signal-safe (a hook may run inside a signal handler).
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdarg>

#include "common/real_function.hpp"
#include "io_call.hpp"

using hpcprof::agent::IoResult;
using hpcprof::agent::RealFunction;
using hpcprof::agent::timedFdCall;
using Op = hpcprof::schema::Op;

extern "C" {
int __open_2(const char*, int);
int __open64_2(const char*, int);
int __openat_2(int, const char*, int);
int __openat64_2(int, const char*, int);
ssize_t __read_chk(int, void*, size_t, size_t);
ssize_t __pread_chk(int, void*, size_t, off_t, size_t);
ssize_t __pread64_chk(int, void*, size_t, off64_t, size_t);
}

namespace {

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);
using Open2Fn = int (*)(const char*, int);
using Openat2Fn = int (*)(int, const char*, int);

RealFunction<OpenFn> g_open("open"), g_open64("open64");
RealFunction<Open2Fn> g_open2("__open_2"), g_open64_2("__open64_2");
RealFunction<OpenatFn> g_openat("openat"), g_openat64("openat64");
RealFunction<Openat2Fn> g_openat2("__openat_2"), g_openat64_2("__openat64_2");
RealFunction<int (*)(const char*, mode_t)> g_creat("creat"), g_creat64("creat64");
RealFunction<ssize_t (*)(int, void*, size_t)> g_read("read");
RealFunction<ssize_t (*)(int, void*, size_t, size_t)> g_readChk("__read_chk");
RealFunction<ssize_t (*)(int, const void*, size_t)> g_write("write");
RealFunction<ssize_t (*)(int, void*, size_t, off_t)> g_pread("pread");
RealFunction<ssize_t (*)(int, void*, size_t, off64_t)> g_pread64("pread64");
RealFunction<ssize_t (*)(int, void*, size_t, off_t, size_t)> g_preadChk("__pread_chk");
RealFunction<ssize_t (*)(int, void*, size_t, off64_t, size_t)> g_pread64Chk("__pread64_chk");
RealFunction<ssize_t (*)(int, const void*, size_t, off_t)> g_pwrite("pwrite");
RealFunction<ssize_t (*)(int, const void*, size_t, off64_t)> g_pwrite64("pwrite64");
RealFunction<ssize_t (*)(int, const iovec*, int)> g_readv("readv"), g_writev("writev");
RealFunction<ssize_t (*)(int, const iovec*, int, off_t)> g_preadv("preadv"), g_pwritev("pwritev");
RealFunction<ssize_t (*)(int, const iovec*, int, off64_t)> g_preadv64("preadv64"),
    g_pwritev64("pwritev64");
RealFunction<ssize_t (*)(int, const iovec*, int, off_t, int)> g_preadv2("preadv2"),
    g_pwritev2("pwritev2");
RealFunction<off_t (*)(int, off_t, int)> g_lseek("lseek");
RealFunction<off64_t (*)(int, off64_t, int)> g_lseek64("lseek64");
RealFunction<int (*)(int)> g_fsync("fsync"), g_fdatasync("fdatasync"), g_close("close"),
    g_dup("dup");
RealFunction<int (*)(int, int)> g_dup2("dup2");
RealFunction<int (*)(int, int, int)> g_dup3("dup3");
RealFunction<int (*)(int, off_t)> g_ftruncate("ftruncate");
RealFunction<int (*)(int, off64_t)> g_ftruncate64("ftruncate64");
RealFunction<ssize_t (*)(int, off64_t*, int, off64_t*, size_t, unsigned)> g_copyFileRange(
    "copy_file_range");
RealFunction<ssize_t (*)(int, off64_t*, int, off64_t*, size_t, unsigned)> g_splice("splice");
RealFunction<ssize_t (*)(int, int, off_t*, size_t)> g_sendfile("sendfile");
RealFunction<ssize_t (*)(int, int, off64_t*, size_t)> g_sendfile64("sendfile64");

int missing() {
    errno = ENOSYS;
    return -1;
}

// open(2) reads its mode only when it creates a file.
bool takesMode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

// Common body of every open form: `call` returns the new descriptor.
template <typename Call> int timedOpen(Op op, int dirfd, const char* path, Call&& call) {
    if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) return call();
    uint64_t t0 = hpcprof::agent::now();
    int fd = call();
    int err = errno;
    uint64_t t1 = hpcprof::agent::now();
    uint32_t object = fd >= 0 ? hpcprof::agent::fdOpened(fd, path, dirfd) : 0;
    if (fd < 0 && path) object = hpcprof::agent::internString(path, __builtin_strlen(path));
    hpcprof::agent::recordFdCall(op, fd, object, t0, t1, fd, IoResult::Status, err, -1);
    errno = err;
    return fd;
}

template <typename Fn> int openWithMode(RealFunction<Fn>& real, Op op, const char* path, int flags,
                                        mode_t mode) {
    auto fn = real.get();
    if (!fn) return missing();
    return timedOpen(op, AT_FDCWD, path, [&] { return fn(path, flags, mode); });
}

template <typename Fn> int openatWithMode(RealFunction<Fn>& real, Op op, int dirfd,
                                          const char* path, int flags, mode_t mode) {
    auto fn = real.get();
    if (!fn) return missing();
    return timedOpen(op, dirfd, path, [&] { return fn(dirfd, path, flags, mode); });
}

/// What a descriptor call asks to move, from its arguments after the descriptor: (buffer,
/// count, ...) and (iovec array, count, ...) calls; -1 for the others (fsync, lseek, ...).
inline int64_t requestedBytes() { return -1; }
template <typename First, typename... Rest> int64_t requestedBytes(First, Rest...) { return -1; }
template <typename... Rest> int64_t requestedBytes(void*, size_t n, Rest...) { return int64_t(n); }
template <typename... Rest> int64_t requestedBytes(const void*, size_t n, Rest...) {
    return int64_t(n);
}
template <typename... Rest> int64_t requestedBytes(const iovec* iov, int cnt, Rest...) {
    int64_t n = 0;
    for (int i = 0; iov && i < cnt && i < 1024; ++i) n += int64_t(iov[i].iov_len);
    return n;
}

template <typename Fn, typename... Args>
auto fdCall(RealFunction<Fn>& real, Op op, IoResult kind, int64_t offset, int fd, Args... args) {
    auto fn = real.get();
    using R = decltype(fn(fd, args...));
    if (!fn) return R(missing());
    return timedFdCall(op, fd, kind, offset, [&] { return fn(fd, args...); },
                       requestedBytes(args...));
}

} // namespace

HPCPROF_HOOK int open(const char* path, int flags, ...) {
    mode_t mode = 0;
    if (takesMode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return openWithMode(g_open, Op::PosixOpen, path, flags, mode);
}

HPCPROF_HOOK int open64(const char* path, int flags, ...) {
    mode_t mode = 0;
    if (takesMode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return openWithMode(g_open64, Op::PosixOpen64, path, flags, mode);
}

HPCPROF_HOOK int openat(int dirfd, const char* path, int flags, ...) {
    mode_t mode = 0;
    if (takesMode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return openatWithMode(g_openat, Op::PosixOpenat, dirfd, path, flags, mode);
}

HPCPROF_HOOK int openat64(int dirfd, const char* path, int flags, ...) {
    mode_t mode = 0;
    if (takesMode(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return openatWithMode(g_openat64, Op::PosixOpenat64, dirfd, path, flags, mode);
}

HPCPROF_HOOK int __open_2(const char* path, int flags) {
    auto fn = g_open2.get();
    if (!fn) return missing();
    return timedOpen(Op::PosixOpen_2, AT_FDCWD, path, [&] { return fn(path, flags); });
}

HPCPROF_HOOK int __open64_2(const char* path, int flags) {
    auto fn = g_open64_2.get();
    if (!fn) return missing();
    return timedOpen(Op::PosixOpen64_2, AT_FDCWD, path, [&] { return fn(path, flags); });
}

HPCPROF_HOOK int __openat_2(int dirfd, const char* path, int flags) {
    auto fn = g_openat2.get();
    if (!fn) return missing();
    return timedOpen(Op::PosixOpenat_2, dirfd, path, [&] { return fn(dirfd, path, flags); });
}

HPCPROF_HOOK int __openat64_2(int dirfd, const char* path, int flags) {
    auto fn = g_openat64_2.get();
    if (!fn) return missing();
    return timedOpen(Op::PosixOpenat64_2, dirfd, path, [&] { return fn(dirfd, path, flags); });
}

HPCPROF_HOOK int creat(const char* path, mode_t mode) {
    auto fn = g_creat.get();
    if (!fn) return missing();
    return timedOpen(Op::PosixCreat, AT_FDCWD, path, [&] { return fn(path, mode); });
}

HPCPROF_HOOK int creat64(const char* path, mode_t mode) {
    auto fn = g_creat64.get();
    if (!fn) return missing();
    return timedOpen(Op::PosixCreat64, AT_FDCWD, path, [&] { return fn(path, mode); });
}

HPCPROF_HOOK ssize_t read(int fd, void* buf, size_t n) {
    return fdCall(g_read, Op::PosixRead, IoResult::Bytes, -1, fd, buf, n);
}

HPCPROF_HOOK ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
    return fdCall(g_readChk, Op::PosixReadChk, IoResult::Bytes, -1, fd, buf, n, buflen);
}

HPCPROF_HOOK ssize_t write(int fd, const void* buf, size_t n) {
    return fdCall(g_write, Op::PosixWrite, IoResult::Bytes, -1, fd, buf, n);
}

HPCPROF_HOOK ssize_t pread(int fd, void* buf, size_t n, off_t off) {
    return fdCall(g_pread, Op::PosixPread, IoResult::Bytes, off, fd, buf, n, off);
}

HPCPROF_HOOK ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
    return fdCall(g_pread64, Op::PosixPread64, IoResult::Bytes, off, fd, buf, n, off);
}

HPCPROF_HOOK ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
    return fdCall(g_preadChk, Op::PosixPreadChk, IoResult::Bytes, off, fd, buf, n, off, buflen);
}

HPCPROF_HOOK ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
    return fdCall(g_pread64Chk, Op::PosixPread64Chk, IoResult::Bytes, off, fd, buf, n, off, buflen);
}

HPCPROF_HOOK ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
    return fdCall(g_pwrite, Op::PosixPwrite, IoResult::Bytes, off, fd, buf, n, off);
}

HPCPROF_HOOK ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
    return fdCall(g_pwrite64, Op::PosixPwrite64, IoResult::Bytes, off, fd, buf, n, off);
}

HPCPROF_HOOK ssize_t readv(int fd, const iovec* iov, int cnt) {
    return fdCall(g_readv, Op::PosixReadv, IoResult::Bytes, -1, fd, iov, cnt);
}

HPCPROF_HOOK ssize_t writev(int fd, const iovec* iov, int cnt) {
    return fdCall(g_writev, Op::PosixWritev, IoResult::Bytes, -1, fd, iov, cnt);
}

HPCPROF_HOOK ssize_t preadv(int fd, const iovec* iov, int cnt, off_t off) {
    return fdCall(g_preadv, Op::PosixPreadv, IoResult::Bytes, off, fd, iov, cnt, off);
}

HPCPROF_HOOK ssize_t preadv64(int fd, const iovec* iov, int cnt, off64_t off) {
    return fdCall(g_preadv64, Op::PosixPreadv64, IoResult::Bytes, off, fd, iov, cnt, off);
}

HPCPROF_HOOK ssize_t pwritev(int fd, const iovec* iov, int cnt, off_t off) {
    return fdCall(g_pwritev, Op::PosixPwritev, IoResult::Bytes, off, fd, iov, cnt, off);
}

HPCPROF_HOOK ssize_t pwritev64(int fd, const iovec* iov, int cnt, off64_t off) {
    return fdCall(g_pwritev64, Op::PosixPwritev64, IoResult::Bytes, off, fd, iov, cnt, off);
}

HPCPROF_HOOK ssize_t preadv2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
    return fdCall(g_preadv2, Op::PosixPreadv2, IoResult::Bytes, off, fd, iov, cnt, off, flags);
}

HPCPROF_HOOK ssize_t pwritev2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
    return fdCall(g_pwritev2, Op::PosixPwritev2, IoResult::Bytes, off, fd, iov, cnt, off, flags);
}

HPCPROF_HOOK off_t lseek(int fd, off_t off, int whence) {
    return fdCall(g_lseek, Op::PosixLseek, IoResult::Status, -1, fd, off, whence);
}

HPCPROF_HOOK off64_t lseek64(int fd, off64_t off, int whence) {
    return fdCall(g_lseek64, Op::PosixLseek64, IoResult::Status, -1, fd, off, whence);
}

HPCPROF_HOOK int fsync(int fd) { return fdCall(g_fsync, Op::PosixFsync, IoResult::Status, -1, fd); }

HPCPROF_HOOK int fdatasync(int fd) {
    return fdCall(g_fdatasync, Op::PosixFdatasync, IoResult::Status, -1, fd);
}

HPCPROF_HOOK int ftruncate(int fd, off_t len) {
    return fdCall(g_ftruncate, Op::PosixFtruncate, IoResult::Status, -1, fd, len);
}

HPCPROF_HOOK int ftruncate64(int fd, off64_t len) {
    return fdCall(g_ftruncate64, Op::PosixFtruncate64, IoResult::Status, -1, fd, len);
}

HPCPROF_HOOK int close(int fd) {
    auto fn = g_close.get();
    if (!fn) return missing();
    if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) {
        hpcprof::agent::fdClosed(fd);
        return fn(fd);
    }
    // Look the object up before the descriptor (and its /proc entry) goes away.
    uint32_t object = hpcprof::agent::fdObject(fd);
    hpcprof::agent::fdClosed(fd);
    uint64_t t0 = hpcprof::agent::now();
    int r = fn(fd);
    int err = errno;
    uint64_t t1 = hpcprof::agent::now();
    hpcprof::agent::recordFdCall(Op::PosixClose, fd, object, t0, t1, r, IoResult::Status, err, -1);
    errno = err;
    return r;
}

HPCPROF_HOOK int dup(int fd) {
    int r = fdCall(g_dup, Op::PosixDup, IoResult::Status, -1, fd);
    if (r >= 0) hpcprof::agent::fdDuplicated(fd, r);
    return r;
}

HPCPROF_HOOK int dup2(int fd, int newFd) {
    int r = fdCall(g_dup2, Op::PosixDup2, IoResult::Status, -1, fd, newFd);
    if (r >= 0) hpcprof::agent::fdDuplicated(fd, r);
    return r;
}

HPCPROF_HOOK int dup3(int fd, int newFd, int flags) {
    int r = fdCall(g_dup3, Op::PosixDup3, IoResult::Status, -1, fd, newFd, flags);
    if (r >= 0) hpcprof::agent::fdDuplicated(fd, r);
    return r;
}

// Kernel-side copies (cat and cp use copy_file_range between files): one event each, recorded
// against the destination descriptor, bytes = bytes copied.
HPCPROF_HOOK ssize_t copy_file_range(int in, off64_t* inOff, int out, off64_t* outOff, size_t len,
                                     unsigned flags) {
    auto fn = g_copyFileRange.get();
    if (!fn) return missing();
    return timedFdCall(Op::PosixCopyFileRange, out, IoResult::Bytes, -1,
                       [&] { return fn(in, inOff, out, outOff, len, flags); });
}

HPCPROF_HOOK ssize_t splice(int in, off64_t* inOff, int out, off64_t* outOff, size_t len,
                            unsigned flags) {
    auto fn = g_splice.get();
    if (!fn) return missing();
    return timedFdCall(Op::PosixSplice, out, IoResult::Bytes, -1,
                       [&] { return fn(in, inOff, out, outOff, len, flags); });
}

HPCPROF_HOOK ssize_t sendfile(int out, int in, off_t* off, size_t count) {
    auto fn = g_sendfile.get();
    if (!fn) return missing();
    return timedFdCall(Op::PosixSendfile, out, IoResult::Bytes, -1,
                       [&] { return fn(out, in, off, count); });
}

HPCPROF_HOOK ssize_t sendfile64(int out, int in, off64_t* off, size_t count) {
    auto fn = g_sendfile64.get();
    if (!fn) return missing();
    return timedFdCall(Op::PosixSendfile64, out, IoResult::Bytes, -1,
                       [&] { return fn(out, in, off, count); });
}
