// SPDX-License-Identifier: MIT
// Hot path of the extended APIs. A batch costs one lookup per wrapped call, two clock reads
// (ibv_wr_start, ibv_wr_complete), one 64-byte record per work request and one for the call (a
// batch of one request: one record for both, 8 bytes when it repeats the previous one); a poll
// two clock reads, a record per completion and one for the call. Requests beyond the rate, and
// their completions, are counted instead (wr_fold.hpp). No lock, no allocation, no syscall.
//
// Batches: each work request is written (kRdmaBatched) when the next one starts or the batch
// ends, since its bytes are only known from the ibv_wr_set_* calls that follow its opcode call
// (the request of a batch of one that was posted: with the call, as a PostOne record);
// the store keeps them until the IbvWrComplete call of the same QP and start time, and drops
// them when the batch failed or was aborted.
#include "ex_data_path.hpp"

#include <cerrno>

#include "data_path.hpp"
#include "ex_objects.hpp"
#include "rdma_writer.hpp"
#include "wr_fold.hpp"

namespace hpcprof::agent::ibverbs {

using schema::Op;

namespace {

/// The entry of a wrapped QP. Our wrappers are only ever installed in objects the table holds
/// (and removed before the entry is), so a miss means the application destroyed the QP while
/// using it; there is then no provider entry to call.
inline ExQpEntry* qpEntry(ibv_qp_ex* qp) { return findExQp(qp); }

/// The fields of the work request being built, as a record's WR part.
void fillBuilt(raw::RdmaRecord* r, const ExQpEntry& e, uint64_t batchStart) {
    r->device = e.device;
    r->qpNum = e.qpNum;
    r->ts = batchStart;
    r->u.wr.wrId = e.wr.wrId;
    r->u.wr.bytes = e.wr.bytes;
    r->u.wr.remoteAddr = e.wr.remoteAddr;
    r->u.wr.rkey = e.wr.rkey;
    r->u.wr.numSge = e.wr.numSge;
    r->u.wr.opcode = e.wr.opcode;
    r->u.wr.flags = e.wr.flags;
    r->u.wr.qpType = e.qpType;
}

/// Writes the work request being built, if any, of the batch started at `batchStart`.
void writeBuilt(ExQpEntry& e, uint64_t batchStart) {
    if (!e.building) return;
    e.building = false;
    e.batchBytes += e.wr.bytes;
    ++e.batchWrs;
    if (e.foldQueue && fold::post(*e.foldQueue, batchStart, e.wr.wrId, e.wr.bytes,
                                  e.wr.flags & raw::kRdmaSignaled))
        return;
    raw::RdmaRecord* r = reserveRdma();
    if (!r) return;
    r->action = raw::RdmaAction::SendWr;
    fillBuilt(r, e, batchStart);
    r->u.wr.flags |= raw::kRdmaBatched;
    commitRdma(r);
}

/// A batch of exactly one work request that the provider posted, the most common batch: the
/// ibv_wr_complete call and its request in one PostOne record (repeatable, as ibv_post_send's).
void writeSinglePost(ExQpEntry& e, uint64_t batchStart, uint64_t end) {
    e.building = false;
    writePostOfOne(e.foldQueue, Op::IbvWrComplete, e.device, e.qpNum, batchStart, end, e.wr.wrId,
                   e.wr.bytes, e.wr.flags & raw::kRdmaSignaled,
                   [&](raw::RdmaRecord* r) { fillBuilt(r, e, batchStart); });
}

/// An opcode call: the previous work request is complete, a new one starts with the wr_id and
/// flags the application set in the QP before the call (as the provider reads them).
inline void beginWr(ExQpEntry& e, const ibv_qp_ex* qp, ibv_wr_opcode opcode, uint32_t rkey = 0,
                    uint64_t remoteAddr = 0) {
    if (!e.batchStart) return; // not recording this batch
    writeBuilt(e, e.batchStart);
    e.wr = ExWr{qp->wr_id, 0, remoteAddr, rkey, 0, uint8_t(opcode),
                uint8_t((qp->wr_flags & IBV_SEND_SIGNALED) ? raw::kRdmaSignaled : 0)};
    e.building = true;
}

inline void addData(ExQpEntry& e, uint64_t bytes, uint32_t pieces) {
    if (!e.building) return;
    e.wr.bytes += bytes;
    e.wr.numSge += pieces;
}

/// Calls the provider's entry `fn` of `qp`'s table entry (a void entry).
#define HPCPROF_EX_FORWARD(fn, ...)                                                               \
    ExQpEntry* e = qpEntry(qp);                                                                   \
    if (!e) [[unlikely]]                                                                          \
        return;                                                                                   \
    e->fn(qp __VA_OPT__(, ) __VA_ARGS__)

} // namespace

void exWrStart(ibv_qp_ex* qp) {
    ExQpEntry* e = qpEntry(qp);
    if (!e) [[unlikely]]
        return;
    // The batch's time starts before the provider's wr_start, as ibv_post_send's does.
    uint64_t t0 = recordingRdma() ? agent::now() : 0;
    e->wrStart(qp);
    e->building = false;
    e->batchWrs = 0;
    e->batchBytes = 0;
    e->batchStart = t0;
    e->foldQueue = t0 ? fold::workQueue(e->device, e->qpNum, false) : nullptr;
    if (e->foldQueue) e->foldMark = fold::mark(*e->foldQueue);
}

int exWrComplete(ibv_qp_ex* qp) {
    ExQpEntry* e = qpEntry(qp);
    if (!e) [[unlikely]] {
        errno = ENODEV;
        return ENODEV;
    }
    uint64_t start = e->batchStart;
    if (!start) return e->wrComplete(qp);
    bool single = e->building && e->batchWrs == 0; // one request, not written yet
    if (!single) writeBuilt(*e, start);
    e->batchStart = 0;
    int rc = e->wrComplete(qp);
    uint64_t t1 = agent::now();
    flushPolls();
    if (single && rc == 0) [[likely]] {
        writeSinglePost(*e, start, t1);
        return rc;
    }
    writeBuilt(*e, start); // a failed single request: written as built, the store drops it
    if (rc != 0 && e->foldQueue) fold::rollBack(*e->foldQueue, e->foldMark);
    uint32_t n = rc == 0 ? e->batchWrs : 0;
    writeCall(Op::IbvWrComplete, e->device, e->qpNum, start, t1, 0, rc == 0 ? e->batchBytes : 0, n,
              rc, n);
    return rc;
}

void exWrAbort(ibv_qp_ex* qp) {
    HPCPROF_EX_FORWARD(wrAbort);
    uint64_t start = e->batchStart;
    if (!start) return;
    uint64_t t1 = agent::now();
    e->batchStart = 0;
    uint32_t discarded = e->batchWrs + (e->building ? 1 : 0);
    uint64_t bytes = e->batchBytes + (e->building ? e->wr.bytes : 0);
    e->building = false;
    if (e->foldQueue) fold::rollBack(*e->foldQueue, e->foldMark);
    flushPolls();
    // Nothing was posted: the call counts the discarded requests, the store drops their records.
    writeCall(Op::IbvWrAbort, e->device, e->qpNum, start, t1, 0, bytes, discarded, 0, 0);
}

void exWrSend(ibv_qp_ex* qp) {
    HPCPROF_EX_FORWARD(wrSend);
    beginWr(*e, qp, IBV_WR_SEND);
}

void exWrSendImm(ibv_qp_ex* qp, __be32 imm) {
    HPCPROF_EX_FORWARD(wrSendImm, imm);
    beginWr(*e, qp, IBV_WR_SEND_WITH_IMM);
}

void exWrSendInv(ibv_qp_ex* qp, uint32_t invalidateRkey) {
    HPCPROF_EX_FORWARD(wrSendInv, invalidateRkey);
    beginWr(*e, qp, IBV_WR_SEND_WITH_INV);
}

void exWrSendTso(ibv_qp_ex* qp, void* hdr, uint16_t hdrSz, uint16_t mss) {
    HPCPROF_EX_FORWARD(wrSendTso, hdr, hdrSz, mss);
    beginWr(*e, qp, IBV_WR_TSO);
}

void exWrRdmaWrite(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr) {
    HPCPROF_EX_FORWARD(wrRdmaWrite, rkey, remoteAddr);
    beginWr(*e, qp, IBV_WR_RDMA_WRITE, rkey, remoteAddr);
}

void exWrRdmaWriteImm(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, __be32 imm) {
    HPCPROF_EX_FORWARD(wrRdmaWriteImm, rkey, remoteAddr, imm);
    beginWr(*e, qp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remoteAddr);
}

void exWrRdmaRead(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr) {
    HPCPROF_EX_FORWARD(wrRdmaRead, rkey, remoteAddr);
    beginWr(*e, qp, IBV_WR_RDMA_READ, rkey, remoteAddr);
}

void exWrAtomicCmpSwp(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, uint64_t compare,
                      uint64_t swap) {
    HPCPROF_EX_FORWARD(wrAtomicCmpSwp, rkey, remoteAddr, compare, swap);
    beginWr(*e, qp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remoteAddr);
}

void exWrAtomicFetchAdd(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, uint64_t add) {
    HPCPROF_EX_FORWARD(wrAtomicFetchAdd, rkey, remoteAddr, add);
    beginWr(*e, qp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remoteAddr);
}

void exWrAtomicWrite(ibv_qp_ex* qp, uint32_t rkey, uint64_t remoteAddr, const void* value) {
    HPCPROF_EX_FORWARD(wrAtomicWrite, rkey, remoteAddr, value);
    beginWr(*e, qp, IBV_WR_ATOMIC_WRITE, rkey, remoteAddr);
    addData(*e, 8, 0); // the 8-byte value travels in the request itself
}

void exWrLocalInv(ibv_qp_ex* qp, uint32_t invalidateRkey) {
    HPCPROF_EX_FORWARD(wrLocalInv, invalidateRkey);
    beginWr(*e, qp, IBV_WR_LOCAL_INV);
}

void exWrBindMw(ibv_qp_ex* qp, ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) {
    HPCPROF_EX_FORWARD(wrBindMw, mw, rkey, info);
    beginWr(*e, qp, IBV_WR_BIND_MW);
}

void exWrSetSge(ibv_qp_ex* qp, uint32_t lkey, uint64_t addr, uint32_t length) {
    HPCPROF_EX_FORWARD(wrSetSge, lkey, addr, length);
    addData(*e, length, 1);
}

void exWrSetSgeList(ibv_qp_ex* qp, size_t n, const ibv_sge* list) {
    HPCPROF_EX_FORWARD(wrSetSgeList, n, list);
    if (e->building) addData(*e, totalLength(list, n), uint32_t(n));
}

void exWrSetInlineData(ibv_qp_ex* qp, void* addr, size_t length) {
    HPCPROF_EX_FORWARD(wrSetInlineData, addr, length);
    addData(*e, length, 1);
}

void exWrSetInlineDataList(ibv_qp_ex* qp, size_t n, const ibv_data_buf* list) {
    HPCPROF_EX_FORWARD(wrSetInlineDataList, n, list);
    if (e->building) addData(*e, totalLength(list, n), uint32_t(n));
}

#undef HPCPROF_EX_FORWARD

// ---- extended CQ ------------------------------------------------------------------------------

namespace {

/// Records the completion the CQ currently points at (after a successful start/next poll), seen
/// at `ts` (0: now, read only if the completion is written in full; a folded one is counted as
/// seen when ibv_start_poll returned: a histogram bin does not tell the difference, and a poll
/// draining many completions saves a clock read each).
void writeCurrent(ExCqEntry& e, ibv_cq_ex* cq, uint64_t ts) {
    // byte_len and qp_num are requested at creation (wrappedCreateCqEx); a provider that
    // refused them leaves the reader NULL and the record says 0.
    uint32_t byteLen = cq->read_byte_len ? cq->read_byte_len(cq) : 0;
    e.pollBytes += byteLen;
    ++e.pollCount;
    uint32_t qpNum = cq->read_qp_num ? cq->read_qp_num(cq) : 0;
    bool ok = cq->status == IBV_WC_SUCCESS;
    uint8_t opcode = ok ? uint8_t(cq->read_opcode(cq)) : 0; // only defined on success
    // The completion of a request folded beyond the rate: counted, not written.
    if (!ok)
        fold::fail(e.device, qpNum);
    else if (fold::complete(e.device, qpNum, opcode & IBV_WC_RECV, cq->wr_id, ts ? ts : e.pollSeen))
        return;
    if (!ts) ts = agent::now();
    raw::RdmaRecord* r = reserveRdma();
    if (!r) return;
    r->action = raw::RdmaAction::Completion;
    r->device = e.device;
    r->qpNum = qpNum;
    r->ts = ts;
    r->u.wc.wrId = cq->wr_id;
    r->u.wc.cq = uint64_t(cq);
    r->u.wc.byteLen = byteLen;
    r->u.wc.srcQp = cq->read_src_qp ? cq->read_src_qp(cq) : 0;
    r->u.wc.wcFlags = cq->read_wc_flags ? cq->read_wc_flags(cq) : 0;
    r->u.wc.status = uint8_t(cq->status);
    r->u.wc.opcode = opcode;
    if (!ok && cq->read_vendor_err) r->u.wc.vendorErr = cq->read_vendor_err(cq);
    commitRdma(r);
}

} // namespace

int exStartPoll(ibv_cq_ex* cq, ibv_poll_cq_attr* attr) {
    ExCqEntry* e = findExCq(cq);
    if (!e) [[unlikely]]
        return ENODEV;
    if (!recordingRdma()) {
        e->pollStart = 0;
        return e->startPoll(cq, attr);
    }
    uint64_t t0 = agent::now();
    int rc = e->startPoll(cq, attr);
    uint64_t t1 = agent::now();
    if (rc == ENOENT) { // an empty poll (ibv_end_poll must not follow): fold
        e->pollStart = 0;
        foldEmptyPoll(Op::IbvStartPoll, ibv_cq_ex_to_cq(cq), e->device, t0, t1);
        return rc;
    }
    pollCompleted();
    flushPolls();
    if (rc != 0) {
        e->pollStart = 0;
        writeCall(Op::IbvStartPoll, e->device, 0, t0, t1, uint64_t(cq), 0, 0, rc);
        return rc;
    }
    e->pollStart = t0;
    e->pollBytes = 0;
    e->pollCount = 0;
    e->pollSeen = t1;
    writeCurrent(*e, cq, t1);
    return 0;
}

int exNextPoll(ibv_cq_ex* cq) {
    ExCqEntry* e = findExCq(cq);
    if (!e) [[unlikely]]
        return ENODEV;
    int rc = e->nextPoll(cq);
    if (rc == 0 && e->pollStart) writeCurrent(*e, cq, 0);
    return rc;
}

void exEndPoll(ibv_cq_ex* cq) {
    ExCqEntry* e = findExCq(cq);
    if (!e) [[unlikely]]
        return;
    e->endPoll(cq);
    uint64_t start = e->pollStart;
    if (!start) return;
    e->pollStart = 0;
    writeCall(Op::IbvStartPoll, e->device, 0, start, agent::now(), uint64_t(cq), e->pollBytes,
              e->pollCount, 0);
}

} // namespace hpcprof::agent::ibverbs
