// SPDX-License-Identifier: MIT
#include "clock_mapping.hpp"

namespace hpcprof::store {

namespace raw = schema::raw;

TickConverter::TickConverter(const raw::ProcessHeader& h, uint64_t fallbackTscHz) {
    if (h.clockKind != raw::ClockKind::Tsc) return; // ticks are already monotonic ns
    m_identity = false;
    m_ticks0 = h.start.ticks;
    m_ns0 = h.start.monotonicNs;
    // The last pair is trustworthy when its seqlock is even (not torn) and it is far enough from
    // the start pair for the slope to be precise (10 ms gives better than 1e-6 here).
    bool lastValid = (h.lastSeq % 2 == 0) && h.last.ticks > h.start.ticks &&
                     h.last.monotonicNs - h.start.monotonicNs > 10'000'000;
    if (lastValid) {
        m_nsPerTick = double(h.last.monotonicNs - h.start.monotonicNs) /
                      double(h.last.ticks - h.start.ticks);
        return;
    }
    uint64_t hz = h.tscHz ? h.tscHz : fallbackTscHz;
    if (hz) {
        m_nsPerTick = 1e9 / double(hz);
    } else {
        m_nsPerTick = 1.0; // nothing better known; flagged as weak
        m_weak = true;
    }
}

} // namespace hpcprof::store

namespace hpcprof::store {

void TickConverter::alignToReference(const raw::ClockSync& init, const raw::ClockSync* final) {
    m_aligned = true;
    m_syncLocal0 = init.localNs;
    m_syncOffset0 = init.offsetNs;
    m_driftPerNs = 0.0;
    if (final && final->valid && final->localNs > init.localNs)
        m_driftPerNs = double(final->offsetNs - init.offsetNs) / double(final->localNs - init.localNs);
}

} // namespace hpcprof::store
