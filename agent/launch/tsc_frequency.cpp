// SPDX-License-Identifier: MIT
#include "hpcprof/launch/tsc_frequency.hpp"

#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace hpcprof::agent {

namespace {
int64_t monotonicNow() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
} // namespace

uint64_t measureTscHz(int64_t sampleNs) {
#if defined(__x86_64__)
    auto tsc = [] { return uint64_t(__rdtsc()); };
    const TickInstant start = narrowestTickInstant(tsc, monotonicNow);
    while (monotonicNow() - start.monotonicNs < sampleNs) {
    }
    const TickInstant end = narrowestTickInstant(tsc, monotonicNow);
    if (end.monotonicNs <= start.monotonicNs || end.ticks <= start.ticks) return 0;
    return uint64_t(double(end.ticks - start.ticks) * 1e9 / double(end.monotonicNs - start.monotonicNs));
#else
    (void)sampleNs;
    return 0;
#endif
}

} // namespace hpcprof::agent
