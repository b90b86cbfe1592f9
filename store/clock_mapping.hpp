// SPDX-License-Identifier: MIT
// Maps a process's raw ticks onto the trace's time base.
//
//   local ns  = monotonic ns of the process's host, from the tick calibration pairs
//               (linear between the start pair and the last pair the agent wrote)
//   trace ns  = local ns + offset, where the offset puts every process on one clock:
//               same host as the reference process  -> the shared monotonic clock (exact);
//               another host                        -> CLOCK_REALTIME at process start.
#pragma once

#include <cstdint>
#include <string>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::store {

class TickConverter {
public:
    /// `fallbackTscHz` is used when the process left only one calibration pair.
    TickConverter(const schema::raw::ProcessHeader& h, uint64_t fallbackTscHz);

    /// Monotonic ns of the process's host for a raw tick value (on the reference process's
    /// clock once alignToReference() was called).
    int64_t toLocalNs(uint64_t ticks) const {
        int64_t ns;
        if (m_identity) {
            ns = int64_t(ticks);
        } else {
            double dt = double(int64_t(ticks - m_ticks0));
            ns = m_ns0 + int64_t(dt * m_nsPerTick);
        }
        return m_aligned ? ns - offsetAt(ns) : ns;
    }

    /// Maps this process's clock onto the reference process's (MPI rank 0) with measured offsets
    /// (this clock minus the reference's): constant with one measurement, linear in between
    /// with two (a constant drift).
    void alignToReference(const schema::raw::ClockSync& init, const schema::raw::ClockSync* final);
    bool aligned() const { return m_aligned; }
    /// The offset removed at local time `ns` (this clock minus the reference's).
    int64_t offsetAt(int64_t ns) const {
        return m_syncOffset0 + int64_t(double(ns - m_syncLocal0) * m_driftPerNs);
    }
    double driftPerNs() const { return m_driftPerNs; }
    /// Converts a tick difference (a duration) to ns.
    int64_t toDurationNs(uint64_t fromTicks, uint64_t toTicks) const {
        if (toTicks < fromTicks) return -1;
        if (m_identity) return int64_t(toTicks - fromTicks);
        return int64_t(double(toTicks - fromTicks) * m_nsPerTick + 0.5);
    }
    bool weakCalibration() const { return m_weak; }

private:
    bool m_identity = true;
    bool m_weak = false;
    uint64_t m_ticks0 = 0;
    int64_t m_ns0 = 0;
    double m_nsPerTick = 1.0;
    bool m_aligned = false;
    int64_t m_syncLocal0 = 0;
    int64_t m_syncOffset0 = 0;
    double m_driftPerNs = 0.0;
};

} // namespace hpcprof::store
