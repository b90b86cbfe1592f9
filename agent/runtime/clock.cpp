// SPDX-License-Identifier: MIT
#include "clock.hpp"

#include <cstring>

#include "hpcprof/launch/tsc_frequency.hpp"
#include "syscalls.hpp"

namespace hpcprof::agent {

namespace detail {
bool g_useTsc = false;
} // namespace detail

namespace {
// constant_tsc + nonstop_tsc in /proc/cpuinfo: the TSC ticks at one rate in every P- and
// C-state, so it is a usable clock. Read with raw syscalls: the agent never records itself.
bool cpuHasInvariantTsc() {
#if defined(__x86_64__)
    static char buf[16384];
    int fd = sys::open("/proc/cpuinfo", O_RDONLY);
    if (fd < 0) return false;
    ssize_t n = sys::read(fd, buf, sizeof(buf) - 1);
    sys::close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    return std::strstr(buf, " constant_tsc") && std::strstr(buf, " nonstop_tsc");
#else
    return false;
#endif
}
} // namespace

schema::raw::ClockKind selectClock(const char* requested) {
    bool wantMonotonic = requested && std::strcmp(requested, "monotonic") == 0;
    detail::g_useTsc = !wantMonotonic && cpuHasInvariantTsc();
    return detail::g_useTsc ? schema::raw::ClockKind::Tsc : schema::raw::ClockKind::Monotonic;
}

schema::raw::ClockPair readClockPair() {
    // The tick read bracketed by the monotonic clock, the narrowest of a few tries (the
    // conversion's rate is the slope between two such pairs).
    const TickInstant at = narrowestTickInstant(readTicks, monotonicNs);
    return {at.ticks, at.monotonicNs, realtimeNs()};
}

} // namespace hpcprof::agent
