// SPDX-License-Identifier: MIT
// Publishing the call a thread is inside on its in-flight line (raw InFlightCall, format 6), for
// `hpcprof status` and the store's unfinished events. Header-only and free of the recorder's TLS,
// so the MPI module inlines it on the line libhpcprof hands it (hpcprof_agent_inflight_line()).
//
// Only the thread's outermost recorded call is published: a call the library makes inside it, or
// a signal handler's call, finds the line taken and leaves it alone. The line's sequence counter
// is odd while the thread writes it: a reader that sees it odd, or changed across its copy, retries.
// A few plain stores to a cache line only this thread writes: no system call, no atomic
// read-modify-write.
#pragma once

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent {

/// Publishes `call` (its op non-zero) on `line`; returns `line` (to clear at the call's exit), or
/// nullptr when nothing was published (no line, or a call of this thread holds it already). A
/// polling state (kInFlightPolling) holds it only until a call comes: the call takes it over.
inline schema::raw::InFlightCall* publishInFlight(schema::raw::InFlightCall* line,
                                                  const schema::raw::InFlightCall& call) {
    if (!line) return nullptr;
    uint32_t seq = __atomic_load_n(&line->seq, __ATOMIC_RELAXED);
    if ((seq & 1) != 0) return nullptr;
    if (__atomic_load_n(&line->op, __ATOMIC_RELAXED) != 0 &&
        !(__atomic_load_n(&line->flags, __ATOMIC_RELAXED) & schema::raw::kInFlightPolling))
        return nullptr;
    __atomic_store_n(&line->seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); // the odd count is seen before any field changes
    line->start = call.start;
    line->bytes = call.bytes;
    line->objectId = call.objectId;
    line->fd = call.fd;
    line->peer = call.peer;
    line->tag = call.tag;
    line->commId = call.commId;
    line->instance = call.instance;
    line->aux = call.aux;
    line->flags = call.flags;
    line->requests = call.requests;
    __atomic_store_n(&line->op, call.op, __ATOMIC_RELAXED);
    __atomic_store_n(&line->seq, seq + 2, __ATOMIC_RELEASE);
    return line;
}

/// Clears what publishInFlight() published (`line` as it returned; nullptr: nothing to do).
inline void clearInFlight(schema::raw::InFlightCall* line) {
    if (!line) return;
    uint32_t seq = __atomic_load_n(&line->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&line->seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&line->op, uint16_t(0), __ATOMIC_RELAXED);
    __atomic_store_n(&line->seq, seq + 2, __ATOMIC_RELEASE);
}

/// True when `line` holds a polling state of `op` (publishPolling()): the state is still this
/// thread's, no call took the line over since.
inline bool holdsPolling(const schema::raw::InFlightCall* line, uint16_t op) {
    return line && __atomic_load_n(&line->op, __ATOMIC_RELAXED) == op &&
           (__atomic_load_n(&line->flags, __ATOMIC_RELAXED) & schema::raw::kInFlightPolling);
}

} // namespace hpcprof::agent
