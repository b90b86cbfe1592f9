// SPDX-License-Identifier: MIT
// The call a thread is inside (raw format 6: ThreadFileHeader::inFlight), read from outside the
// process while it runs or after it ended, and the unfinished events the store makes of them.
//
// A process's "last seen" moment, where its unfinished calls end: the latest of its records'
// ends, its in-flight calls' entries, its header's latest clock refresh (chunk hand-offs, exit)
// and, when `hpcprof run` ended the job (--timeout, SIGUSR1), the moment it did so.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "hpcprof/schema/raw_format.hpp"
#include "hpcprof/status.hpp"
#include "hpcprof/store/trace_writer.hpp"
#include "raw_reader.hpp"

namespace hpcprof::store {

enum class InFlightState {
    None, ///< the thread is inside no recorded call
    Call, ///< `out` holds the call
    Torn, ///< the line was being written on every attempt (or its writer was killed mid-way)
};

/// Reads the in-flight line of the thread header at `header` (a read-only mapping of a thread
/// file, possibly written meanwhile): the sequence counter before and after the copy must agree
/// and be even. Takes no lock and writes nothing.
InFlightState readInFlight(const char* header, schema::raw::InFlightCall& out);

/// The unfinished event of a published call (start = end = its entry; see RawEvent::unfinished).
RawEvent unfinishedEvent(const schema::raw::InFlightCall& call);

/// Trace ns of when process `h` was last seen (file comment), from its threads' records (raw
/// ticks through `ticksToTrace`), its header (monotonic ns through `monoToTrace`) and
/// `stoppedRealtimeNs` (0 = the job was not ended by hpcprof run).
template <typename TicksToTrace, typename MonoToTrace>
int64_t lastSeenTs(const schema::raw::ProcessHeader& h, const std::vector<ThreadRecords>& threads,
                   const TicksToTrace& ticksToTrace, const MonoToTrace& monoToTrace,
                   int64_t stoppedRealtimeNs) {
    uint64_t ticks = h.start.ticks;
    for (const ThreadRecords& t : threads) {
        for (const RawEvent& e : t.events) ticks = std::max(ticks, e.end);
        if (t.inFlight.op != 0) ticks = std::max(ticks, t.inFlight.start);
    }
    int64_t ts = std::max(ticksToTrace(ticks), monoToTrace(h.last.monotonicNs));
    if (stoppedRealtimeNs > 0) // through the realtime clock's offset at the header's last pair
        ts = std::max(ts, monoToTrace(stoppedRealtimeNs - (h.last.realtimeNs - h.last.monotonicNs)));
    return ts;
}

/// Adds each thread's published call to its events as an unfinished event ending when the
/// process was last seen (ThreadRecords::unfinishedUntilTs), which `lastSeenTs` computes, once
/// and only if some thread has a call (it reads every event); returns how many (torn lines are
/// counted in `torn`).
int64_t addUnfinishedCalls(std::vector<ThreadRecords>& threads, const std::function<int64_t()>& lastSeenTs,
                           int64_t& torn);

/// Writes what the in-flight line `c` adds to its unfinished event `eventId`: the
/// event_unfinished row (requested bytes, -1: NULL) and a wait's request count (event_arg key
/// `requests`, InFlightCall::requests, when not 0).
Status writeUnfinished(TraceWriter& w, int64_t eventId, const schema::raw::InFlightCall& c);

} // namespace hpcprof::store
