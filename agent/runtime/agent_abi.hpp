// SPDX-License-Identifier: MIT
// The agent's C interface for capture modules built as separate shared objects (the MPI module,
// built per MPI ABI). libhpcprof.so exports these; a module calls them instead of linking its own
// copy of the recorder, so every source of a process writes through one recorder.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hpcprof/schema/raw_format.hpp"

extern "C" {
/// Variables of libhpcprof.so that a module reads inline on its per-call path instead of calling
/// in for each (an MPI call made five such calls: the recording check, two clock reads, the
/// counters' entry and exit checks). Addresses, fixed for the life of the process; read them
/// with relaxed atomic loads (acquire for `state`).
struct hpcprof_agent_hot_fields {
    const int* state;                ///< 2 = recording; otherwise ask hpcprof_agent_recording()
    const uint32_t* sources;         ///< agent::SourceBit mask of the recorded sources
    const bool* useTsc;              ///< ticks are the TSC; otherwise ask hpcprof_agent_now()
    const int64_t* clockSkewTicks;   ///< added to every tick read (a test-only skew; 0)
    const uint64_t* counterGapTicks; ///< counters: minimum ticks between two boundary samples
                                     ///< of a thread, 0 while not known yet
};
/// The fields above; the same answer for the life of the process.
const struct hpcprof_agent_hot_fields* hpcprof_agent_hot(void);
/// 1 when the calling thread should record source `sourceBit` (agent::SourceBit).
int hpcprof_agent_recording(uint32_t sourceBit);
/// Raw ticks for event timestamps.
uint64_t hpcprof_agent_now(void);
/// The next record slot of the calling thread, or NULL when dropped (counted). Fill it, then
/// store its kind byte with release ordering.
hpcprof::schema::raw::EventRecord* hpcprof_agent_reserve(void);
/// Appends a complete 64-byte record (kind byte set); a call repeating the thread's previous one
/// is written as a Repeat entry (agent::appendRecord).
void hpcprof_agent_append(const void* record);
/// The calling thread's in-flight line (raw InFlightCall in its file header), NULL when it has
/// no file; publish on it with agent::publishInFlight() (runtime/in_flight.hpp).
hpcprof::schema::raw::InFlightCall* hpcprof_agent_inflight_line(void);
/// Interns a string for this process; 0 if it could not be recorded.
uint32_t hpcprof_agent_intern(const char* text, size_t length);
/// The rank MPI reported (overrides the launcher environment).
void hpcprof_agent_set_rank(int rank, int worldSize, const char* source);
/// How the process is ending (schema::raw::EndState).
void hpcprof_agent_mark_end(uint32_t endState, int exitCode);
/// CLOCK_MONOTONIC ns as this process sees it (with the test skew applied).
int64_t hpcprof_agent_local_ns(void);
/// Stores a clock-offset measurement against rank 0 (which = 0: at init, 1: at finalize).
void hpcprof_agent_clock_sync(int which, int64_t localNs, int64_t offsetNs, int64_t rttNs);
}
