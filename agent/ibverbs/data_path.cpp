// SPDX-License-Identifier: MIT
// Hot path: every posted work request and every poll of a recorded process passes here. Cost per
// call: one context lookup, two clock reads, one 64-byte record per call and per work request or
// completion (one for a call with one WR or completion; 8 bytes when it repeats the last one).
// Requests beyond the rate, and their completions, are counted instead (wr_fold.hpp).
// No lock, no allocation, no syscall. Thread-safe and async-signal-safe as far as the provider's
// own entries are.
#include "data_path.hpp"

#include "context_table.hpp"
#include "runtime/polling_state.hpp"
#include "rdma_writer.hpp"
#include "wr_fold.hpp"

namespace hpcprof::agent::ibverbs {

using schema::Op;

namespace {

/// Consecutive empty polls of one CQ on this thread, not yet written.
struct PendingPoll {
    ibv_cq* cq;
    uint64_t start;
    uint64_t end;
    uint32_t count;
    uint16_t device;
    Op op; ///< IbvPollCq or IbvStartPoll
};
thread_local PendingPoll t_poll __attribute__((tls_model("initial-exec")));

} // namespace

void pollCompleted() { agent::pollSucceeded(); }

namespace {

template <typename Wr> uint64_t sgBytes(const Wr* wr) {
    return totalLength(wr->sg_list, size_t(wr->num_sge < 0 ? 0 : wr->num_sge));
}

// The WR part of a SendWr (or PostOne) record.
void fillSendWr(raw::RdmaRecord* r, const ibv_qp* qp, const ibv_send_wr* w, uint64_t bytes) {
    r->u.wr.wrId = w->wr_id;
    r->u.wr.bytes = bytes;
    switch (w->opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
        r->u.wr.remoteAddr = w->wr.rdma.remote_addr;
        r->u.wr.rkey = w->wr.rdma.rkey;
        break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        r->u.wr.remoteAddr = w->wr.atomic.remote_addr;
        r->u.wr.rkey = w->wr.atomic.rkey;
        break;
    default: break;
    }
    r->u.wr.numSge = uint32_t(w->num_sge);
    r->u.wr.opcode = uint8_t(w->opcode);
    r->u.wr.flags = (w->send_flags & IBV_SEND_SIGNALED) ? raw::kRdmaSignaled : 0;
    r->u.wr.qpType = uint8_t(qp->qp_type);
}

// The WR part of a RecvWr (or PostOne) record; `srq` = the SRQ posted to, 0 for a QP.
void fillRecvWr(raw::RdmaRecord* r, uint8_t qpType, uint64_t srq, const ibv_recv_wr* w,
                uint64_t bytes) {
    r->u.wr.wrId = w->wr_id;
    r->u.wr.bytes = bytes;
    r->u.wr.remoteAddr = srq;
    r->u.wr.numSge = uint32_t(w->num_sge);
    r->u.wr.opcode = 255;
    r->u.wr.flags = raw::kRdmaSignaled; // receives always complete
    r->u.wr.qpType = qpType;
    r->u.wr.srq = srq ? 1 : 0;
}

// The completion part of a Completion (or PollOne) record.
void fillCompletion(raw::RdmaRecord* r, const ibv_cq* cq, const ibv_wc& w) {
    r->u.wc.wrId = w.wr_id;
    r->u.wc.cq = uint64_t(cq);
    r->u.wc.byteLen = w.byte_len;
    r->u.wc.srcQp = w.src_qp;
    r->u.wc.wcFlags = w.wc_flags;
    r->u.wc.vendorErr = w.vendor_err;
    r->u.wc.status = uint8_t(w.status);
    r->u.wc.opcode = uint8_t(w.opcode);
}

// One WR or completion record of `action` that `fill` completes, written in place.
template <typename Fill>
void writeWrRecord(raw::RdmaAction action, uint16_t device, uint32_t qpNum, uint64_t ts,
                   Fill&& fill) {
    raw::RdmaRecord* r = reserveRdma();
    if (!r) return;
    r->action = action;
    r->device = device;
    r->qpNum = qpNum;
    r->ts = ts;
    fill(r);
    commitRdma(r);
}

/// WRs the provider accepted: all of them on success, those before *bad on failure.
template <typename Wr> uint32_t acceptedCount(const Wr* wr, Wr* const* bad, int rc) {
    uint32_t n = 0;
    for (const Wr* w = wr; w; w = w->next) {
        if (rc != 0 && bad && w == *bad) break;
        ++n;
    }
    return n;
}

template <typename Wr> uint64_t totalBytes(const Wr* wr, uint32_t accepted) {
    uint64_t bytes = 0;
    uint32_t i = 0;
    for (const Wr* w = wr; w && i < accepted; w = w->next, ++i) bytes += sgBytes(w);
    return bytes;
}

} // namespace

void flushPolls() {
    PendingPoll& p = t_poll;
    if (!p.cq) return;
    writeCall(p.op, p.device, 0, p.start, p.end, uint64_t(p.cq), 0, 0, 0, 0, p.count);
    p.cq = nullptr;
}

void foldEmptyPoll(Op op, ibv_cq* cq, uint16_t device, uint64_t t0, uint64_t t1) {
    PendingPoll& p = t_poll;
    if (p.cq == cq && p.op == op && t0 - p.end < kPollGapTicks) {
        p.end = t1;
        p.count++;
        return;
    }
    if (p.cq) flushPolls();
    p = PendingPoll{cq, t0, t1, 1, device, op};
    agent::pollUnsuccessful(op, t0);
}

int wrappedPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    const ContextEntry* c = find(qp->context);
    if (!c) [[unlikely]] { // released under our feet: the application raced close against a post
        errno = ENODEV;
        return ENODEV;
    }
    if (!recordingRdma()) return c->postSend(qp, wr, bad);
    uint64_t t0 = agent::now();
    int rc = c->postSend(qp, wr, bad);
    uint64_t t1 = agent::now();
    if (t_poll.cq) [[unlikely]] flushPolls();
    fold::WorkQueue* q = wr ? fold::workQueue(c->device, qp->qp_num, false) : nullptr;
    if (rc == 0 && wr && !wr->next) [[likely]] {
        uint64_t bytes = sgBytes(wr);
        writePostOfOne(q, Op::IbvPostSend, c->device, qp->qp_num, t0, t1, wr->wr_id, bytes,
                       wr->send_flags & IBV_SEND_SIGNALED,
                       [&](raw::RdmaRecord* r) { fillSendWr(r, qp, wr, bytes); });
        return rc;
    }
    uint32_t accepted = acceptedCount(wr, bad, rc);
    writeCall(Op::IbvPostSend, c->device, qp->qp_num, t0, t1, 0, totalBytes(wr, accepted),
              accepted, rc, accepted);
    uint32_t i = 0;
    for (const ibv_send_wr* w = wr; w && i < accepted; w = w->next, ++i) {
        uint64_t bytes = sgBytes(w);
        if (!q || !fold::post(*q, t0, w->wr_id, bytes, w->send_flags & IBV_SEND_SIGNALED))
            writeWrRecord(raw::RdmaAction::SendWr, c->device, qp->qp_num, t0,
                          [&](raw::RdmaRecord* r) { fillSendWr(r, qp, w, bytes); });
    }
    return rc;
}

int wrappedPostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    const ContextEntry* c = find(qp->context);
    if (!c) [[unlikely]] {
        errno = ENODEV;
        return ENODEV;
    }
    if (!recordingRdma()) return c->postRecv(qp, wr, bad);
    uint64_t t0 = agent::now();
    int rc = c->postRecv(qp, wr, bad);
    uint64_t t1 = agent::now();
    if (t_poll.cq) [[unlikely]] flushPolls();
    auto fill = [&](const ibv_recv_wr* w, uint64_t bytes) {
        return [=](raw::RdmaRecord* r) { fillRecvWr(r, uint8_t(qp->qp_type), 0, w, bytes); };
    };
    fold::WorkQueue* q = wr ? fold::workQueue(c->device, qp->qp_num, true) : nullptr;
    if (rc == 0 && wr && !wr->next) [[likely]] {
        uint64_t bytes = sgBytes(wr);
        writePostOfOne(q, Op::IbvPostRecv, c->device, qp->qp_num, t0, t1, wr->wr_id, bytes, true,
                       fill(wr, bytes));
        return rc;
    }
    uint32_t accepted = acceptedCount(wr, bad, rc);
    writeCall(Op::IbvPostRecv, c->device, qp->qp_num, t0, t1, 0, totalBytes(wr, accepted),
              accepted, rc, accepted);
    uint32_t i = 0;
    for (const ibv_recv_wr* w = wr; w && i < accepted; w = w->next, ++i) {
        uint64_t bytes = sgBytes(w);
        if (!q || !fold::post(*q, t0, w->wr_id, bytes, true))
            writeWrRecord(raw::RdmaAction::RecvWr, c->device, qp->qp_num, t0, fill(w, bytes));
    }
    return rc;
}

int wrappedPostSrqRecv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    const ContextEntry* c = find(srq->context);
    if (!c) [[unlikely]] {
        errno = ENODEV;
        return ENODEV;
    }
    if (!recordingRdma()) return c->postSrqRecv(srq, wr, bad);
    uint64_t t0 = agent::now();
    int rc = c->postSrqRecv(srq, wr, bad);
    uint64_t t1 = agent::now();
    if (t_poll.cq) [[unlikely]] flushPolls();
    auto fill = [&](const ibv_recv_wr* w) {
        return [=](raw::RdmaRecord* r) { fillRecvWr(r, 0, uint64_t(srq), w, sgBytes(w)); };
    };
    if (rc == 0 && wr && !wr->next) [[likely]] {
        writeCallWithOne(raw::RdmaAction::PostOne, Op::IbvPostSrqRecv, c->device, 0, t0, t1,
                         fill(wr));
        return rc;
    }
    uint32_t accepted = acceptedCount(wr, bad, rc);
    writeCall(Op::IbvPostSrqRecv, c->device, 0, t0, t1, uint64_t(srq), totalBytes(wr, accepted),
              accepted, rc, accepted);
    uint32_t i = 0;
    for (const ibv_recv_wr* w = wr; w && i < accepted; w = w->next, ++i)
        writeWrRecord(raw::RdmaAction::RecvWr, c->device, 0, t0, fill(w));
    return rc;
}

namespace {

/// An empty poll of `cq` by ibv_poll_cq: folded into the thread's pending run of empty polls of
/// that CQ (the common case of a spinning poller: a few loads and stores, nothing written).
[[gnu::always_inline]] inline void emptyPollCq(ibv_cq* cq, uint16_t device, uint64_t t0, uint64_t t1) {
    PendingPoll& p = t_poll;
    if (p.cq == cq && p.op == Op::IbvPollCq && t0 - p.end < kPollGapTicks) [[likely]] {
        p.end = t1;
        p.count++;
        return;
    }
    if (p.cq) flushPolls();
    p = PendingPoll{cq, t0, t1, 1, device, Op::IbvPollCq};
    agent::pollUnsuccessful(Op::IbvPollCq, t0);
}

/// Records a poll of `cq` that returned `got` (not 0): its completions (one record for the call
/// and a single completion), or the error.
void recordPollCq(const ContextEntry* c, ibv_cq* cq, int got, const ibv_wc* wc, uint64_t t0,
                  uint64_t t1) {
    pollCompleted(); // a completion (or an error) ends the wait
    if (t_poll.cq) flushPolls();
    auto folded = [&](const ibv_wc& w) { // the completion of a request folded beyond the rate
        if (w.status == IBV_WC_SUCCESS)
            return fold::complete(c->device, w.qp_num, w.opcode & IBV_WC_RECV, w.wr_id, t1);
        fold::fail(c->device, w.qp_num);
        return false;
    };
    if (got == 1) [[likely]] {
        if (folded(wc[0]))
            writeCall(Op::IbvPollCq, c->device, 0, t0, t1, uint64_t(cq), wc[0].byte_len, 1, 0);
        else
            writeCallWithOne(raw::RdmaAction::PollOne, Op::IbvPollCq, c->device, wc[0].qp_num, t0,
                             t1, [&](raw::RdmaRecord* r) { fillCompletion(r, cq, wc[0]); });
        return;
    }
    uint64_t bytes = 0;
    for (int i = 0; i < got; ++i) bytes += wc[i].byte_len;
    writeCall(Op::IbvPollCq, c->device, 0, t0, t1, uint64_t(cq), got > 0 ? bytes : 0,
              got > 0 ? uint32_t(got) : 0, got < 0 ? got : 0);
    for (int i = 0; i < got; ++i)
        if (!folded(wc[i]))
            writeWrRecord(raw::RdmaAction::Completion, c->device, wc[i].qp_num, t1,
                          [&](raw::RdmaRecord* r) { fillCompletion(r, cq, wc[i]); });
}

} // namespace

int wrappedPollCq(ibv_cq* cq, int n, ibv_wc* wc) {
    const ContextEntry* c = find(cq->context);
    if (!c) [[unlikely]] {
        errno = ENODEV;
        return -ENODEV;
    }
    if (!recordingRdma()) return c->pollCq(cq, n, wc);
    uint64_t t0 = agent::now();
    int got = c->pollCq(cq, n, wc);
    uint64_t t1 = agent::now();
    if (got == 0) [[likely]]
        emptyPollCq(cq, c->device, t0, t1);
    else
        recordPollCq(c, cq, got, wc, t0, t1);
    return got;
}

} // namespace hpcprof::agent::ibverbs
