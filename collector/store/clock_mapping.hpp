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

    /// Monotonic ns of the process's host for a raw tick value.
    int64_t toLocalNs(uint64_t ticks) const {
        if (m_identity) return int64_t(ticks);
        double dt = double(int64_t(ticks - m_ticks0));
        return m_ns0 + int64_t(dt * m_nsPerTick);
    }
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
};

} // namespace hpcprof::store
