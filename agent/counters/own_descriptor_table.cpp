// SPDX-License-Identifier: MIT
#include "own_descriptor_table.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime/syscalls.hpp"

namespace hpcprof::agent::counters {

namespace {
constexpr long kSysCloseRange = 436; // close_range (Linux 5.9), absent from old headers

// Older kernels: close what /proc/thread-self/fd lists (this thread's table by now).
void closeListed() {
    DIR* d = opendir("/proc/thread-self/fd");
    if (!d) return;
    int self = dirfd(d);
    while (dirent* e = readdir(d))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && std::atoi(e->d_name) != self)
            sys::close(std::atoi(e->d_name));
    closedir(d);
}
} // namespace

bool takeOwnDescriptorTable() {
    if (syscall(SYS_unshare, CLONE_FILES) != 0) return false;
    if (syscall(kSysCloseRange, 0, ~0u, 0) != 0) closeListed();
    // Standard descriptors on /dev/null, so that a library writing to stderr from this thread
    // (PAPI) writes to neither one of our descriptors nor the program's.
    int null = sys::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null == 0) {
        syscall(SYS_dup3, 0, 1, O_CLOEXEC);
        syscall(SYS_dup3, 0, 2, O_CLOEXEC);
    } else if (null >= 0) {
        sys::close(null);
    }
    return true;
}

} // namespace hpcprof::agent::counters
