// SPDX-License-Identifier: MIT
// The wrappers hpcprof installs in a taken-over context's function table (context_table.hpp):
// each forwards to the provider's entry of that context, then records the call, its work
// requests or completions (raw_format.hpp, RDMA section).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::agent::ibverbs {

int wrappedPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int wrappedPostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int wrappedPostSrqRecv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
int wrappedPollCq(ibv_cq* cq, int n, ibv_wc* wc);

/// Writes the calling thread's pending folded empty polls, if any (any other verbs call on the
/// thread, and close, end a fold).
void flushPolls();

/// An empty poll of `cq` through `op` (ibv_poll_cq returning 0, ibv_start_poll returning
/// ENOENT): folded with the thread's previous empty polls of that CQ and call when close enough.
void foldEmptyPoll(schema::Op op, ibv_cq* cq, uint16_t device, uint64_t t0, uint64_t t1);

/// A poll returned a completion (or failed): the thread no longer shows "polling since the first
/// empty poll" (the in-flight line, kInFlightPolling), which the first empty poll of a run sets.
void pollCompleted();

/// Empty polls of one CQ less than this apart fold into one event.
constexpr uint64_t kPollGapTicks = 20'000; // ~10 us at 2 GHz; ticks are close enough here

} // namespace hpcprof::agent::ibverbs
