// SPDX-License-Identifier: MIT
// System calls issued with the `syscall` instruction itself, returning -errno on failure.
//
// The provisioning helper (provisioner.cpp) runs as a task that shares the program's memory but
// not its thread control block: its %fs still points at the thread that created it, so anything
// that writes thread-local state (errno in libc's wrappers, lazy PLT binding) would scribble on
// that thread. These calls touch nothing but registers.
#pragma once

#if defined(__x86_64__)
#define HPCPROF_HAVE_RAW_SYSCALL 1

namespace hpcprof::agent::rawsys {

inline long call(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

} // namespace hpcprof::agent::rawsys

#else
#define HPCPROF_HAVE_RAW_SYSCALL 0
#include <unistd.h>

#include <cerrno>
#endif

namespace hpcprof::agent {

/// One system call, -errno on failure. Raw where we have it: code that also runs on the
/// provisioning helper must not touch errno (it would be the creating thread's).
inline long sysCall(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0,
                    long f = 0) {
#if HPCPROF_HAVE_RAW_SYSCALL
    return rawsys::call(nr, a, b, c, d, e, f);
#else
    long r = ::syscall(nr, a, b, c, d, e, f);
    return r == -1 ? -errno : r;
#endif
}

} // namespace hpcprof::agent
