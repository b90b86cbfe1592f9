// SPDX-License-Identifier: MIT
// Appends RdmaRecords (raw_format.hpp) to the calling thread's raw file. Async-signal-safe, no
// lock, no allocation, no syscall (the recorder's slot reservation).
#pragma once

#include "hpcprof/schema/raw_format.hpp"
#include "runtime/recorder.hpp"
#include "wr_fold.hpp"

namespace hpcprof::agent::ibverbs {

namespace raw = schema::raw;

/// A slot for one record (zero-filled, never used before), or nullptr when dropped (counted).
inline raw::RdmaRecord* reserveRdma() {
    return reinterpret_cast<raw::RdmaRecord*>(agent::reserveSlot());
}

/// Publishes a filled record.
inline void commitRdma(raw::RdmaRecord* r) {
    __atomic_store_n(&r->kind, raw::RecordKind::Rdma, __ATOMIC_RELEASE);
}

/// Bytes of a scatter/gather or inline-data list (ibv_sge, ibv_data_buf: both have `length`).
template <typename Piece> uint64_t totalLength(const Piece* list, size_t n) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; ++i) bytes += list[i].length;
    return bytes;
}

/// True when RDMA is being recorded in this process.
inline bool recordingRdma() { return agent::recording(agent::SourceBit::Rdma); }

/// A record image with its header filled (the rest zero), for agent::appendRecord().
inline raw::RdmaRecord rdmaImage(raw::RdmaAction action, uint16_t device, uint32_t qpNum,
                                 uint64_t ts) {
    raw::RdmaRecord image{};
    image.kind = raw::RecordKind::Rdma;
    image.action = action;
    image.device = device;
    image.qpNum = qpNum;
    image.ts = ts;
    return image;
}

/// A call with its one WR (`action` PostOne) or its one completion (PollOne), which `fill`
/// completes, in one record. Handed over whole, so that one repeating the thread's previous one
/// (same QP, opcode and bytes, wr_id advancing by a fixed step) takes 8 bytes.
template <typename Fill>
void writeCallWithOne(raw::RdmaAction action, schema::Op op, uint16_t device, uint32_t qpNum,
                      uint64_t t0, uint64_t t1, Fill&& fill) {
    raw::RdmaRecord image = rdmaImage(action, device, qpNum, t0);
    fill(&image);
    // PostOne and PollOne keep their call's op and end at the same offsets (raw_format.hpp).
    image.u.postOne.op = uint16_t(op);
    image.u.postOne.end = t1;
    agent::appendRecord(&image);
}

/// Writes a Call record.
inline void writeCall(schema::Op op, uint16_t device, uint32_t qpNum, uint64_t t0, uint64_t t1,
                      uint64_t object, uint64_t bytes, uint32_t count, int rc, uint32_t posted = 0,
                      uint32_t folded = 0) {
    raw::RdmaRecord image = rdmaImage(raw::RdmaAction::Call, device, qpNum, t0);
    image.u.call.end = t1;
    image.u.call.bytes = bytes;
    image.u.call.object = object;
    image.u.call.count = count;
    image.u.call.folded = folded;
    image.u.call.op = uint16_t(op);
    image.u.call.rc = int16_t(rc < -32768 ? -32768 : rc > 32767 ? 32767 : rc);
    image.u.call.posted = posted;
    agent::appendRecord(&image); // repeated calls (same call, other times) take 8 bytes
}

/// A post of one request that the provider accepted (`bytes`: its sg total): the call alone
/// when the request folds beyond the rate in `q` (wr_fold.hpp; nullptr = never), else the call
/// and the request, which `fill` completes, in one PostOne record. Either takes 8 bytes when it
/// repeats the thread's previous call.
template <typename Fill>
void writePostOfOne(fold::WorkQueue* q, schema::Op op, uint16_t device, uint32_t qpNum,
                    uint64_t t0, uint64_t t1, uint64_t wrId, uint64_t bytes, bool signaled,
                    Fill&& fill) {
    if (q && fold::post(*q, t0, wrId, bytes, signaled))
        writeCall(op, device, qpNum, t0, t1, 0, bytes, 1, 0, 1);
    else
        writeCallWithOne(raw::RdmaAction::PostOne, op, device, qpNum, t0, t1, fill);
}

} // namespace hpcprof::agent::ibverbs
