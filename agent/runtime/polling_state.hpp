// SPDX-License-Identifier: MIT
// "Polling since T" on a thread's in-flight line (raw kInFlightPolling) for busy-poll loops that
// never block inside one call: an RDMA completion queue (ibv_poll_cq, ibv_start_poll), a CUDA
// stream or event (cudaStreamQuery, cudaEventQuery and their driver forms), a non-blocking NCCL
// communicator (ncclCommGetAsyncError reporting ncclInProgress). The first unsuccessful poll of
// a run publishes it, the next ones of the same function leave it (the wait started then), and
// a successful poll (a completion, cudaSuccess, the operation done or failed) clears it; a call
// that is published meanwhile takes the line over and clears it itself at its exit.
//
// Per poll: a thread-local load and compare (the state is already shown), or the stores of a
// publication at the first unsuccessful poll. No syscall, no allocation; async-signal-safe as
// far as publishInFlight() is.
#pragma once

#include "recorder.hpp"

namespace hpcprof::agent {

namespace detail {
/// The thread's in-flight line while it shows a polling state, nullptr when it does not.
extern constinit thread_local schema::raw::InFlightCall* t_pollingLine __attribute__((tls_model("initial-exec")));
} // namespace detail

/// An unsuccessful poll through `op` at `t0`: shows the thread as polling since `t0`, unless it
/// already shows a poll of `op` (an earlier unsuccessful poll with no success since: the wait
/// started then) or it is inside a published call. `fill` may add what the poll is on (peer,
/// communicator) to the line before it is published.
template <typename Fill> inline void pollUnsuccessful(schema::Op op, uint64_t t0, Fill&& fill) {
    if (holdsPolling(detail::t_pollingLine, uint16_t(op)) && detail::t_pollingLine == inFlightLine())
        [[likely]] return;
    schema::raw::InFlightCall c = inFlightCall(op, t0);
    c.flags = schema::raw::kInFlightPolling;
    fill(c);
    detail::t_pollingLine = beginCall(c);
}

inline void pollUnsuccessful(schema::Op op, uint64_t t0) {
    pollUnsuccessful(op, t0, [](schema::raw::InFlightCall&) {});
}

/// A successful poll (or a failed one): the thread no longer shows a polling state.
inline void pollSucceeded() {
    schema::raw::InFlightCall* line = detail::t_pollingLine;
    if (!line) [[likely]]
        return;
    detail::t_pollingLine = nullptr;
    // Unless a call took the line over meanwhile (it clears its own at its exit), or the line is
    // a forked parent's (this process's thread has another).
    if ((__atomic_load_n(&line->flags, __ATOMIC_RELAXED) & schema::raw::kInFlightPolling) &&
        line == inFlightLine())
        endCall(line);
}

} // namespace hpcprof::agent
