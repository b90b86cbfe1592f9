// SPDX-License-Identifier: MIT
// The TSC's frequency, measured once by `hpcprof run` and passed to every agent in
// HPCPROF_TSC_HZ, so that no process spends its start measuring it; and the tick-to-monotonic
// pairs that the frequency and the agent's calibration pairs are made of.
#pragma once

#include <cstdint>

namespace hpcprof::agent {

/// A tick read and the monotonic time it was read at (the midpoint of the two monotonic reads
/// around it), and how far apart those two were: the pair is good to half of `widthNs`.
struct TickInstant {
    uint64_t ticks = 0;
    int64_t monotonicNs = 0;
    int64_t widthNs = INT64_MAX;
};

/// The narrowest of up to kTries brackets of `readTicks()` by `monotonicNs()`; the first one
/// under kNarrowNs ends the search. A bracket is usually tens of ns wide, but an interrupt or a
/// hypervisor exit inside it widens it to tens of microseconds (on a VM here: 1 bracket in 10^4
/// over 200 ns, the worst 125 us), and its midpoint is then off by half of that: over a 20 ms
/// calibration span, parts in 10^4 of every duration (a 2 ms wait read as 1,999,672 ns).
template <typename ReadTicks, typename ReadNs>
TickInstant narrowestTickInstant(ReadTicks readTicks, ReadNs monotonicNs) {
    constexpr int kTries = 16;
    constexpr int64_t kNarrowNs = 250;
    TickInstant best;
    for (int i = 0; i < kTries && best.widthNs > kNarrowNs; ++i) {
        const int64_t m0 = monotonicNs();
        const uint64_t ticks = readTicks();
        const int64_t m1 = monotonicNs();
        if (m1 - m0 < best.widthNs) best = {ticks, m0 + (m1 - m0) / 2, m1 - m0};
    }
    return best;
}

/// Measures the TSC frequency against CLOCK_MONOTONIC over `sampleNs`; 0 where there is no TSC.
uint64_t measureTscHz(int64_t sampleNs);

} // namespace hpcprof::agent
