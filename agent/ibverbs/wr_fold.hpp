// SPDX-License-Identifier: MIT
// Folding of work requests beyond HPCPROF_RDMA_EVENT_RATE, in the agent.
//
// Why here and not only in the store: a busy NIC posts millions of requests a second, and a
// 64-byte record per request costs a fresh page of the thread's file every 64 requests, which
// is more than everything else the wrapper does. So per thread and work queue (a QP's send
// queue, or its receive queue), the first `perBucket` requests of each bucket (1 ms) are
// written in full, and the rest are counted into one Aggregate record of that bucket
// (raw_format.hpp): written once, then updated in place.
//
// A completion of a folded request that the posting thread polls adds its post-to-completion
// time to the record that counted the request. Which completions those are is told by a FIFO of
// the thread's requests on that queue that will complete (signalled sends, all receives; a work
// queue completes in post order), each entry pointing at its Aggregate or at none. The thread
// stops following a queue for good at any surprise: a failed completion, a completion that is
// not the FIFO's oldest (polled by another thread, or a QP number reused), more requests
// outstanding than the FIFO holds; requests still fold beyond the rate after that, only their
// latency is not measured, and the completions another thread polls are written in full there
// and counted by the store against the QP's aggregates (families/rdma/rdma_records.cpp).
//
// Shared receive queues do not fold here (their completions come through any of their QPs, in
// no one QP's order); the store folds them beyond the rate.
//
// Per-thread state, no lock. Not async-signal-safe against a handler that posts to the same QP
// on the thread it interrupted (verbs calls from signal handlers are not a thing).
#pragma once

#include <cstdint>

#include "hpcprof/schema/raw_format.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent::ibverbs::fold {

/// Reads the rate and the tick rate once (at the first context taken over). Rate 0 = never fold.
void configure();

/// A request the thread posted that will complete (a signalled send, a receive), not seen yet.
struct Pending {
    uint64_t wrId;
    uint64_t post;                       ///< ticks
    schema::raw::RdmaRecord* aggregate;  ///< the Aggregate that counted it; nullptr = in full
};
constexpr uint32_t kRingSize = 256; // a power of two

enum class Track : uint8_t {
    Following, ///< signalled requests enter the FIFO, to be matched with their completions
    Off,       ///< no new request enters it (requests still fold); the FIFO only drains
};

/// The calling thread's view of one QP's send queue or receive queue.
struct WorkQueue {
    uint64_t key;                    ///< (device + 1) << 32 | qpNum (| receives bit); 0 = free
    uint64_t bucketEnd;              ///< ticks at which the budget renews
    schema::raw::RdmaRecord* open;   ///< the bucket's Aggregate record, nullptr = none yet
    uint32_t kept;                   ///< requests written in full in this bucket
    uint32_t head, tail;             ///< FIFO: ring[head .. tail) (indices wrap)
    uint32_t generation;             ///< collector generation it was made in (fork: stale)
    Track track;
    bool sigAll;                     ///< every request completes (sq_sig_all; receives)
    Pending ring[kRingSize];
};

namespace detail {
extern uint32_t g_perBucket; // full requests per bucket and QP; 0 = folding off
extern constinit thread_local WorkQueue* t_last __attribute__((tls_model("initial-exec")));
inline uint64_t keyOf(uint16_t device, uint32_t qpNum, bool receives) {
    return (uint64_t(device) + 1) << 32 | qpNum | (receives ? schema::raw::kRdmaAggregateReceives : 0);
}
WorkQueue* findOrCreate(uint16_t device, uint32_t qpNum, bool receives);
void roll(WorkQueue& q, uint64_t ts);
schema::raw::RdmaRecord* openAggregate(WorkQueue& q, uint64_t ts);
} // namespace detail

/// The calling thread's WorkQueue for the send queue (or the receive queue) of QP `qpNum` of
/// `device`, created at its first post; nullptr when the agent folds nothing (rate 0, the
/// thread's table full, no memory). Inline: every post asks, and it is nearly always the queue
/// the thread asked for last.
inline WorkQueue* workQueue(uint16_t device, uint32_t qpNum, bool receives) {
    WorkQueue* q = detail::t_last;
    if (q && q->key == detail::keyOf(device, qpNum, receives) &&
        q->generation == agent::detail::g_generation) [[likely]]
        return q;
    return detail::findOrCreate(device, qpNum, receives);
}

/// A request posted at `ts` (ticks; `signaled`: it will complete): true = folded (counted; the
/// caller writes no record for it), false = the caller writes it in full.
inline bool post(WorkQueue& q, uint64_t ts, uint64_t wrId, uint64_t bytes, bool signaled) {
    if (ts >= q.bucketEnd) [[unlikely]]
        detail::roll(q, ts);
    schema::raw::RdmaRecord* a = nullptr;
    if (q.kept >= detail::g_perBucket) a = q.open ? q.open : detail::openAggregate(q, ts);
    if ((signaled || q.sigAll) && q.track == Track::Following) {
        if (q.tail - q.head == kRingSize)
            q.track = Track::Off; // more outstanding than we follow: polled elsewhere
        else
            q.ring[q.tail++ % kRingSize] = {wrId, ts, a};
    }
    if (!a) {
        ++q.kept;
        return false;
    }
    a->u.aggregate.bytes += bytes;
    if (ts > a->u.aggregate.end) a->u.aggregate.end = ts;
    // Its completions go to its 16-bit latency bins: it takes no more requests than they hold.
    if (++a->u.aggregate.posted == 0xffff) q.open = nullptr;
    return true;
}

/// Where a batch of posts began, to take them back if the provider refuses the batch.
struct Mark {
    uint32_t tail;
    uint32_t kept;
    schema::raw::RdmaRecord* open;
    uint32_t posted;
    uint64_t bytes;
};
Mark mark(const WorkQueue& q);
/// Takes back what post() counted since `m` (a batch that was aborted or failed).
void rollBack(WorkQueue& q, const Mark& m);

/// A successful completion polled at `ts` by this thread, of a receive or a send: true = it
/// completed a folded request (counted; the caller writes no record for it).
bool complete(uint16_t device, uint32_t qpNum, bool receive, uint64_t wrId, uint64_t ts);
/// A failed completion of QP `qpNum` (written in full; its opcode does not say the queue): the
/// QP is failing, its flushes need not come in order, so the thread stops following its queues.
void fail(uint16_t device, uint32_t qpNum);

/// A QP was created or destroyed: remembers which QPs signal every request.
void noteQp(uint16_t device, uint32_t qpNum, bool created, bool sigAll);

/// Bin of an Aggregate latency histogram for a latency of `ns` (raw_format.hpp).
inline int latencyBin(uint64_t ns) {
    constexpr uint64_t first = uint64_t(1) << schema::raw::kRdmaLatencyFirstBinLog2;
    if (ns <= first) return 0;
    int bin = (64 - __builtin_clzll(ns - 1)) - schema::raw::kRdmaLatencyFirstBinLog2;
    return bin < schema::raw::kRdmaLatencyBins ? bin : schema::raw::kRdmaLatencyBins - 1;
}

} // namespace hpcprof::agent::ibverbs::fold
