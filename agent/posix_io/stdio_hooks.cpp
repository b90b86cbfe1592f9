// SPDX-License-Identifier: MIT
// stdio hooks. glibc's stdio reaches the kernel through internal calls that never pass the
// write/read hooks, so streams are recorded at this level: fopen/fdopen/freopen, fread/fwrite
// (and _unlocked, _chk), fgets, fputs/puts, the fprintf/printf family, fflush, fseek, fclose.
// Bytes are what the call reports it transferred. Streams without a descriptor (fmemopen,
// open_memstream) are memory, not I/O, and are not recorded.
//
// Not recorded (documented in docs/io-capture.md): single-character calls (fgetc, fputc, getc,
// putc), fscanf, and the wide-character family.
#include <fcntl.h>

#include <stdio_ext.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "common/real_function.hpp"
#include "io_call.hpp"

using hpcprof::agent::IoResult;
using hpcprof::agent::RealFunction;
using Op = hpcprof::schema::Op;

extern "C" {
size_t __fread_chk(void*, size_t, size_t, size_t, FILE*);
char* __fgets_chk(char*, size_t, int, FILE*);
int __fprintf_chk(FILE*, int, const char*, ...);
int __vfprintf_chk(FILE*, int, const char*, va_list);
int __printf_chk(int, const char*, ...);
}

namespace {

RealFunction<FILE* (*)(const char*, const char*)> g_fopen("fopen"), g_fopen64("fopen64");
RealFunction<FILE* (*)(int, const char*)> g_fdopen("fdopen");
RealFunction<FILE* (*)(const char*, const char*, FILE*)> g_freopen("freopen"),
    g_freopen64("freopen64");
RealFunction<size_t (*)(void*, size_t, size_t, FILE*)> g_fread("fread"),
    g_freadUnlocked("fread_unlocked");
RealFunction<size_t (*)(void*, size_t, size_t, size_t, FILE*)> g_freadChk("__fread_chk");
RealFunction<size_t (*)(const void*, size_t, size_t, FILE*)> g_fwrite("fwrite"),
    g_fwriteUnlocked("fwrite_unlocked");
RealFunction<char* (*)(char*, int, FILE*)> g_fgets("fgets");
RealFunction<char* (*)(char*, size_t, int, FILE*)> g_fgetsChk("__fgets_chk");
RealFunction<int (*)(const char*, FILE*)> g_fputs("fputs");
RealFunction<int (*)(const char*)> g_puts("puts");
RealFunction<int (*)(FILE*, const char*, va_list)> g_vfprintf("vfprintf");
RealFunction<int (*)(FILE*, int, const char*, va_list)> g_vfprintfChk("__vfprintf_chk");
RealFunction<int (*)(FILE*)> g_fflush("fflush"), g_fclose("fclose");
RealFunction<int (*)(FILE*, long, int)> g_fseek("fseek");
RealFunction<int (*)(FILE*, off_t, int)> g_fseeko("fseeko");
RealFunction<int (*)(FILE*, off64_t, int)> g_fseeko64("fseeko64");

inline int streamFd(FILE* f) { return f ? fileno_unlocked(f) : -1; }

// Times `call` on stream `f`; `bytesOf(result)` gives the bytes moved (negative = failed).
template <typename Call, typename BytesOf>
auto timedStreamCall(Op op, FILE* f, IoResult kind, Call&& call, BytesOf&& bytesOf) {
    int fd = streamFd(f);
    if (fd < 0 || !hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) return call();
    uint64_t t0 = hpcprof::agent::now();
    auto result = call();
    int err = errno;
    uint64_t t1 = hpcprof::agent::now();
    hpcprof::agent::recordFdCall(op, fd, hpcprof::agent::fdObject(fd), t0, t1,
                                     bytesOf(result), kind, err, -1);
    errno = err;
    return result;
}

// The stream-opening calls register the new stream's descriptor with its path.
template <typename Call> FILE* timedStreamOpen(Op op, const char* path, Call&& call) {
    if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) return call();
    uint64_t t0 = hpcprof::agent::now();
    FILE* f = call();
    int err = errno;
    uint64_t t1 = hpcprof::agent::now();
    int fd = streamFd(f);
    uint32_t object = 0;
    if (fd >= 0)
        object = path ? hpcprof::agent::fdOpened(fd, path, AT_FDCWD)
                      : hpcprof::agent::fdObject(fd);
    else if (path)
        object = hpcprof::agent::internString(path, std::strlen(path));
    hpcprof::agent::recordFdCall(op, fd, object, t0, t1, f ? 0 : -1, IoResult::Status, err, -1);
    errno = err;
    return f;
}

FILE* missingStream() {
    errno = ENOSYS;
    return nullptr;
}

int64_t itemsToBytes(size_t items, size_t size) { return int64_t(items * size); }
int64_t statusOf(int r) { return r == EOF ? -1 : 0; }
int64_t printed(int r) { return r; }

int vfprintfHook(Op op, FILE* f, const char* fmt, va_list ap) {
    auto fn = g_vfprintf.get();
    if (!fn) return -1;
    return timedStreamCall(op, f, IoResult::Bytes, [&] { return fn(f, fmt, ap); }, printed);
}

int vfprintfChkHook(Op op, FILE* f, int flag, const char* fmt, va_list ap) {
    auto fn = g_vfprintfChk.get();
    if (!fn) return -1;
    return timedStreamCall(op, f, IoResult::Bytes, [&] { return fn(f, flag, fmt, ap); }, printed);
}

} // namespace

HPCPROF_HOOK FILE* fopen(const char* path, const char* mode) {
    auto fn = g_fopen.get();
    if (!fn) return missingStream();
    return timedStreamOpen(Op::StdioFopen, path, [&] { return fn(path, mode); });
}

HPCPROF_HOOK FILE* fopen64(const char* path, const char* mode) {
    auto fn = g_fopen64.get();
    if (!fn) return missingStream();
    return timedStreamOpen(Op::StdioFopen64, path, [&] { return fn(path, mode); });
}

HPCPROF_HOOK FILE* fdopen(int fd, const char* mode) {
    auto fn = g_fdopen.get();
    if (!fn) return missingStream();
    return timedStreamOpen(Op::StdioFdopen, nullptr, [&] { return fn(fd, mode); });
}

HPCPROF_HOOK FILE* freopen(const char* path, const char* mode, FILE* f) {
    auto fn = g_freopen.get();
    if (!fn) return missingStream();
    return timedStreamOpen(Op::StdioFreopen, path, [&] { return fn(path, mode, f); });
}

HPCPROF_HOOK FILE* freopen64(const char* path, const char* mode, FILE* f) {
    auto fn = g_freopen64.get();
    if (!fn) return missingStream();
    return timedStreamOpen(Op::StdioFreopen64, path, [&] { return fn(path, mode, f); });
}

HPCPROF_HOOK size_t fread(void* buf, size_t size, size_t n, FILE* f) {
    auto fn = g_fread.get();
    if (!fn) return 0;
    return timedStreamCall(Op::StdioFread, f, IoResult::Bytes, [&] { return fn(buf, size, n, f); },
                           [&](size_t r) { return itemsToBytes(r, size); });
}

HPCPROF_HOOK size_t fread_unlocked(void* buf, size_t size, size_t n, FILE* f) {
    auto fn = g_freadUnlocked.get();
    if (!fn) return 0;
    return timedStreamCall(Op::StdioFreadUnlocked, f, IoResult::Bytes,
                           [&] { return fn(buf, size, n, f); },
                           [&](size_t r) { return itemsToBytes(r, size); });
}

HPCPROF_HOOK size_t __fread_chk(void* buf, size_t buflen, size_t size, size_t n, FILE* f) {
    auto fn = g_freadChk.get();
    if (!fn) return 0;
    return timedStreamCall(Op::StdioFreadChk, f, IoResult::Bytes,
                           [&] { return fn(buf, buflen, size, n, f); },
                           [&](size_t r) { return itemsToBytes(r, size); });
}

HPCPROF_HOOK size_t fwrite(const void* buf, size_t size, size_t n, FILE* f) {
    auto fn = g_fwrite.get();
    if (!fn) return 0;
    return timedStreamCall(Op::StdioFwrite, f, IoResult::Bytes, [&] { return fn(buf, size, n, f); },
                           [&](size_t r) { return itemsToBytes(r, size); });
}

HPCPROF_HOOK size_t fwrite_unlocked(const void* buf, size_t size, size_t n, FILE* f) {
    auto fn = g_fwriteUnlocked.get();
    if (!fn) return 0;
    return timedStreamCall(Op::StdioFwriteUnlocked, f, IoResult::Bytes,
                           [&] { return fn(buf, size, n, f); },
                           [&](size_t r) { return itemsToBytes(r, size); });
}

HPCPROF_HOOK char* fgets(char* s, int n, FILE* f) {
    auto fn = g_fgets.get();
    if (!fn) return nullptr;
    return timedStreamCall(Op::StdioFgets, f, IoResult::Bytes, [&] { return fn(s, n, f); },
                           [](char* r) { return r ? int64_t(std::strlen(r)) : int64_t(0); });
}

HPCPROF_HOOK char* __fgets_chk(char* s, size_t size, int n, FILE* f) {
    auto fn = g_fgetsChk.get();
    if (!fn) return nullptr;
    return timedStreamCall(Op::StdioFgetsChk, f, IoResult::Bytes, [&] { return fn(s, size, n, f); },
                           [](char* r) { return r ? int64_t(std::strlen(r)) : int64_t(0); });
}

HPCPROF_HOOK int fputs(const char* s, FILE* f) {
    auto fn = g_fputs.get();
    if (!fn) return EOF;
    return timedStreamCall(Op::StdioFputs, f, IoResult::Bytes, [&] { return fn(s, f); },
                           [&](int r) { return r == EOF ? int64_t(-1) : int64_t(std::strlen(s)); });
}

HPCPROF_HOOK int puts(const char* s) {
    auto fn = g_puts.get();
    if (!fn) return EOF;
    return timedStreamCall(Op::StdioPuts, stdout, IoResult::Bytes, [&] { return fn(s); },
                           [&](int r) { return r == EOF ? int64_t(-1) : int64_t(std::strlen(s) + 1); });
}

HPCPROF_HOOK int vfprintf(FILE* f, const char* fmt, va_list ap) {
    return vfprintfHook(Op::StdioVfprintf, f, fmt, ap);
}

HPCPROF_HOOK int fprintf(FILE* f, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintfHook(Op::StdioFprintf, f, fmt, ap);
    va_end(ap);
    return r;
}

HPCPROF_HOOK int vprintf(const char* fmt, va_list ap) {
    return vfprintfHook(Op::StdioVprintf, stdout, fmt, ap);
}

HPCPROF_HOOK int printf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintfHook(Op::StdioPrintf, stdout, fmt, ap);
    va_end(ap);
    return r;
}

HPCPROF_HOOK int __vfprintf_chk(FILE* f, int flag, const char* fmt, va_list ap) {
    return vfprintfChkHook(Op::StdioVfprintfChk, f, flag, fmt, ap);
}

HPCPROF_HOOK int __fprintf_chk(FILE* f, int flag, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintfChkHook(Op::StdioFprintfChk, f, flag, fmt, ap);
    va_end(ap);
    return r;
}

HPCPROF_HOOK int __printf_chk(int flag, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintfChkHook(Op::StdioPrintfChk, stdout, flag, fmt, ap);
    va_end(ap);
    return r;
}

HPCPROF_HOOK int fflush(FILE* f) {
    auto fn = g_fflush.get();
    if (!fn) return EOF;
    // fflush(NULL) flushes every stream: no single object, recorded without one.
    if (!f) {
        if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) return fn(f);
        uint64_t t0 = hpcprof::agent::now();
        int r = fn(f);
        int err = errno;
        uint64_t t1 = hpcprof::agent::now();
        hpcprof::agent::recordFdCall(Op::StdioFflush, -1, 0, t0, t1, statusOf(r),
                                         IoResult::Status, err, -1);
        errno = err;
        return r;
    }
    // A stream with nothing buffered has nothing to flush: no I/O happens and nothing is
    // recorded (programs that flush after every line would otherwise double their events).
    // Otherwise the bytes are the output the flush wrote.
    size_t pending = __fpending(f);
    if (pending == 0 && f->_IO_read_ptr >= f->_IO_read_end) return fn(f);
    return timedStreamCall(Op::StdioFflush, f, IoResult::Bytes, [&] { return fn(f); },
                           [&](int r) { return r == 0 ? int64_t(pending) : int64_t(-1); });
}

HPCPROF_HOOK int fseek(FILE* f, long off, int whence) {
    auto fn = g_fseek.get();
    if (!fn) return -1;
    return timedStreamCall(Op::StdioFseek, f, IoResult::Status, [&] { return fn(f, off, whence); },
                           [](int r) { return int64_t(r); });
}

HPCPROF_HOOK int fseeko(FILE* f, off_t off, int whence) {
    auto fn = g_fseeko.get();
    if (!fn) return -1;
    return timedStreamCall(Op::StdioFseeko, f, IoResult::Status, [&] { return fn(f, off, whence); },
                           [](int r) { return int64_t(r); });
}

HPCPROF_HOOK int fseeko64(FILE* f, off64_t off, int whence) {
    auto fn = g_fseeko64.get();
    if (!fn) return -1;
    return timedStreamCall(Op::StdioFseeko64, f, IoResult::Status, [&] { return fn(f, off, whence); },
                           [](int r) { return int64_t(r); });
}

HPCPROF_HOOK int fclose(FILE* f) {
    auto fn = g_fclose.get();
    if (!fn) return EOF;
    int fd = streamFd(f);
    if (fd < 0 || !hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) {
        hpcprof::agent::fdClosed(fd);
        return fn(f);
    }
    // fclose closes the descriptor inside libc, out of the close() hook's sight.
    uint32_t object = hpcprof::agent::fdObject(fd);
    hpcprof::agent::fdClosed(fd);
    uint64_t t0 = hpcprof::agent::now();
    int r = fn(f);
    int err = errno;
    uint64_t t1 = hpcprof::agent::now();
    hpcprof::agent::recordFdCall(Op::StdioFclose, fd, object, t0, t1, statusOf(r),
                                     IoResult::Status, err, -1);
    errno = err;
    return r;
}
