// SPDX-License-Identifier: MIT
// Where each process's times land on the trace's one time base.
//
//   RunClock      the reference the whole run shares: the earliest process defines ts 0 (its
//                 host's monotonic clock and the realtime clock at that moment), and rank 0,
//                 when MPI measured clock offsets against it.
//   ProcessClock  one process: its tick converter, and the offset from its local monotonic ns
//                 to trace ns (same host as the reference: the shared monotonic clock, exact;
//                 rank 0's clock when MPI measured an offset beyond the round trip; else the
//                 realtime clock at the process's start).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clock_mapping.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

/// Text of a fixed-size, NUL-padded header field.
std::string fixedString(const char* s, size_t capacity);

struct RunClock {
    std::string refHost;
    int64_t originMono = 0, originRealtime = 0;
    bool mpiReference = false;      ///< rank 0 measured clock offsets (MPI)
    std::string mpiReferenceHost;
    int64_t mpiReferenceOffset = 0; ///< rank 0's own local-to-trace offset

    /// From the processes, oldest first, and which of them own their rank (rank 0 is the MPI
    /// reference only when it owns its rank).
    static RunClock of(const std::vector<RawProcess>& procs, const std::vector<bool>& ownsRank);
    /// metadata clock_method: mpi_pingpong, monotonic+realtime (several hosts) or monotonic.
    std::string method(const std::vector<RawProcess>& procs) const;
};

class ProcessClock {
public:
    ProcessClock(const schema::raw::ProcessHeader& h, const RunClock& run, uint64_t fallbackTscHz);

    /// Raw event ticks -> trace ns.
    int64_t ticksToTrace(uint64_t ticks) const { return m_clock.toLocalNs(ticks) + m_offset; }
    /// This process's CLOCK_MONOTONIC ns (header times, GPU and NVTX clock pairs) -> trace ns.
    int64_t toTrace(int64_t localNs) const {
        return (m_mpiAligned ? localNs - m_clock.offsetAt(localNs) : localNs) + m_offset;
    }
    const TickConverter& converter() const { return m_clock; }
    bool sameHost() const { return m_sameHost; }
    /// The process row's clock columns: method, offset, and drift and uncertainty when aligned
    /// by MPI.
    void describe(const schema::raw::ProcessHeader& h, ProcessRow& row) const;

private:
    TickConverter m_clock;
    bool m_sameHost = true;
    bool m_mpiAligned = false;
    int64_t m_offset = 0;
};

} // namespace hpcprof::store
