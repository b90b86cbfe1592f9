// SPDX-License-Identifier: MIT
#include "process_clock.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hpcprof::store {

std::string fixedString(const char* s, size_t capacity) { return std::string(s, strnlen(s, capacity)); }

RunClock RunClock::of(const std::vector<RawProcess>& procs, const std::vector<bool>& ownsRank) {
    RunClock c;
    if (procs.empty()) return c;
    const auto& ref = procs.front().header; // earliest start: defines ts 0
    c.refHost = fixedString(ref.host, sizeof(ref.host));
    c.originMono = ref.start.monotonicNs;
    c.originRealtime = ref.start.realtimeNs;
    for (size_t i = 0; i < procs.size(); ++i) {
        const auto& h = procs[i].header;
        if (!ownsRank[i] || h.rank != 0 || !h.syncInit.valid) continue;
        bool same = fixedString(h.host, sizeof(h.host)) == c.refHost;
        c.mpiReference = true;
        c.mpiReferenceHost = fixedString(h.host, sizeof(h.host));
        c.mpiReferenceOffset =
            same ? -c.originMono : (h.start.realtimeNs - h.start.monotonicNs) - c.originRealtime;
    }
    return c;
}

std::string RunClock::method(const std::vector<RawProcess>& procs) const {
    bool anyRealtime = false;
    for (const auto& p : procs) anyRealtime |= fixedString(p.header.host, 64) != refHost;
    return mpiReference ? "mpi_pingpong" : anyRealtime ? "monotonic+realtime" : "monotonic";
}

ProcessClock::ProcessClock(const schema::raw::ProcessHeader& h, const RunClock& run,
                           uint64_t fallbackTscHz)
    : m_clock(h, fallbackTscHz) {
    const std::string host = fixedString(h.host, sizeof(h.host));
    m_sameHost = host == run.refHost;
    // Same host: one monotonic clock, exact. Elsewhere: wall clock at process start.
    m_offset = m_sameHost ? -run.originMono
                          : (h.start.realtimeNs - h.start.monotonicNs) - run.originRealtime;
    // MPI ranks measured their clock's offset to rank 0: put them on rank 0's clock. On rank
    // 0's host the monotonic clock is shared and exact; a measured offset within the round trip
    // there is measurement noise, not a clock difference, and is not applied.
    const bool sharesRank0Clock =
        host == run.mpiReferenceHost && std::llabs(h.syncInit.offsetNs) <= h.syncInit.rttNs;
    m_mpiAligned = run.mpiReference && h.syncInit.valid && !sharesRank0Clock;
    if (m_mpiAligned) {
        m_clock.alignToReference(h.syncInit, &h.syncFinal);
        m_offset = run.mpiReferenceOffset;
    }
}

void ProcessClock::describe(const schema::raw::ProcessHeader& h, ProcessRow& row) const {
    row.clockMethod = m_mpiAligned ? "mpi_pingpong" : m_sameHost ? "monotonic" : "realtime";
    row.clockOffsetNs = m_mpiAligned ? m_offset - m_clock.offsetAt(h.start.monotonicNs) : m_offset;
    if (!m_mpiAligned) return;
    row.clockDriftPpb = int64_t(m_clock.driftPerNs() * 1e9);
    int64_t rtt = std::max(h.syncInit.rttNs, h.syncFinal.valid ? h.syncFinal.rttNs : 0);
    row.clockUncertaintyNs = rtt / 2;
}

} // namespace hpcprof::store
