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
    int64_t m0 = monotonicNow();
    uint64_t t0 = __rdtsc();
    int64_t m1;
    do {
        m1 = monotonicNow();
    } while (m1 - m0 < sampleNs);
    uint64_t t1 = __rdtsc();
    return uint64_t(double(t1 - t0) * 1e9 / double(m1 - m0));
#else
    (void)sampleNs;
    return 0;
#endif
}

} // namespace hpcprof::agent
