// SPDX-License-Identifier: MIT
// The agent's one time base. Hooks read raw ticks (the invariant TSC where the CPU has one,
// CLOCK_MONOTONIC otherwise); the store converts ticks to nanoseconds with the calibration pairs
// in the process header, so no conversion happens on the hot path.
#pragma once

#include <cstdint>
#include <ctime>

#include "hpcprof/schema/raw_format.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace hpcprof::agent {

namespace detail {
// Set once at agent start; read on every tick. Plain global: written before any hook records.
extern bool g_useTsc;
} // namespace detail

inline int64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t realtimeNs() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// Raw ticks. Thread-safe and async-signal-safe.
inline uint64_t readTicks() {
#if defined(__x86_64__)
    if (detail::g_useTsc) return __rdtsc();
#endif
    return uint64_t(monotonicNs());
}

/// Chooses the tick source: TSC when the CPU says it is invariant, unless HPCPROF_CLOCK=monotonic.
schema::raw::ClockKind selectClock(const char* requested);

/// Reads ticks and both system clocks as close together as possible.
schema::raw::ClockPair readClockPair();


} // namespace hpcprof::agent
