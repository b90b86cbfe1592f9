// SPDX-License-Identifier: MIT
// The extended-API objects hpcprof has wrapped. An ibv_qp_ex / ibv_cq_ex carries its own
// function pointers (ibv_wr_send(qpx) is qpx->wr_send(qpx), ibv_start_poll(cq) is
// cq->start_poll(cq, attr)), so each object created through a taken-over context gets its
// pointers replaced by wrappers (ex_data_path.cpp); the provider's originals, and the state of
// the batch or poll in progress, live here in fixed tables, and go back into the object when it
// is destroyed.
//
// Thread-safety: track/untrack run under a mutex (create/destroy are rare); find*() is lock-free
// (acquire loads), called on every wrapped call. The batch and poll state of one entry is only
// touched by the thread that holds the object between ibv_wr_start and ibv_wr_complete
// (ibv_start_poll and ibv_end_poll), which the verbs API already requires to be serialised.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "wr_fold.hpp"

namespace hpcprof::agent::ibverbs {

/// The work request being built (written when the next one starts or the batch completes).
struct ExWr {
    uint64_t wrId;
    uint64_t bytes;
    uint64_t remoteAddr;
    uint32_t rkey;
    uint32_t numSge;
    uint8_t opcode; ///< enum ibv_wr_opcode
    uint8_t flags;  ///< raw::kRdmaSignaled
};

struct ExQpEntry {
    ibv_qp_ex* qpx; ///< nullptr = free slot (published last, with release ordering)
    // The provider's entries of this QP.
    decltype(ibv_qp_ex::wr_start) wrStart;
    decltype(ibv_qp_ex::wr_complete) wrComplete;
    decltype(ibv_qp_ex::wr_abort) wrAbort;
    decltype(ibv_qp_ex::wr_send) wrSend;
    decltype(ibv_qp_ex::wr_send_imm) wrSendImm;
    decltype(ibv_qp_ex::wr_send_inv) wrSendInv;
    decltype(ibv_qp_ex::wr_send_tso) wrSendTso;
    decltype(ibv_qp_ex::wr_rdma_write) wrRdmaWrite;
    decltype(ibv_qp_ex::wr_rdma_write_imm) wrRdmaWriteImm;
    decltype(ibv_qp_ex::wr_rdma_read) wrRdmaRead;
    decltype(ibv_qp_ex::wr_atomic_cmp_swp) wrAtomicCmpSwp;
    decltype(ibv_qp_ex::wr_atomic_fetch_add) wrAtomicFetchAdd;
    decltype(ibv_qp_ex::wr_atomic_write) wrAtomicWrite;
    decltype(ibv_qp_ex::wr_local_inv) wrLocalInv;
    decltype(ibv_qp_ex::wr_bind_mw) wrBindMw;
    decltype(ibv_qp_ex::wr_set_sge) wrSetSge;
    decltype(ibv_qp_ex::wr_set_sge_list) wrSetSgeList;
    decltype(ibv_qp_ex::wr_set_inline_data) wrSetInlineData;
    decltype(ibv_qp_ex::wr_set_inline_data_list) wrSetInlineDataList;
    uint32_t qpNum;
    uint16_t device;
    uint8_t qpType;
    // The batch in progress (owner: the thread between ibv_wr_start and its end).
    uint64_t batchStart; ///< ticks at ibv_wr_start, 0 = no batch being recorded
    uint64_t batchBytes;
    uint32_t batchWrs;
    bool building; ///< `wr` holds a started work request not yet written
    ExWr wr;
    fold::WorkQueue* foldQueue; ///< the batch's thread's view of this QP, nullptr = no folding
    fold::Mark foldMark;        ///< where the batch began in it (taken back if it fails)
};

struct ExCqEntry {
    ibv_cq_ex* cq; ///< nullptr = free slot
    decltype(ibv_cq_ex::start_poll) startPoll;
    decltype(ibv_cq_ex::next_poll) nextPoll;
    decltype(ibv_cq_ex::end_poll) endPoll;
    uint16_t device;
    // The poll in progress (owner: the thread between ibv_start_poll and ibv_end_poll).
    uint64_t pollStart; ///< ticks at ibv_start_poll, 0 = none being recorded
    uint64_t pollSeen;  ///< ticks when ibv_start_poll returned
    uint64_t pollBytes;
    uint32_t pollCount;
};

constexpr int kMaxExQps = 4096; // powers of two (slot = hash & (N - 1))
constexpr int kMaxExCqs = 1024;

namespace detail {
extern ExQpEntry g_exQps[kMaxExQps];
extern ExCqEntry g_exCqs[kMaxExCqs];

inline unsigned exSlotOf(const void* p, int n) {
    return unsigned(((uint64_t(reinterpret_cast<uintptr_t>(p)) >> 4) * 0x9E3779B97F4A7C15ull) >> 40) &
           unsigned(n - 1);
}

template <typename Entry, typename Key, Key* Entry::*K, int N>
inline Entry* findIn(Entry (&table)[N], const Key* key) {
    unsigned s = exSlotOf(key, N);
    for (int i = 0; i < N; ++i) {
        Entry& e = table[(s + unsigned(i)) & unsigned(N - 1)];
        const Key* k = __atomic_load_n(&(e.*K), __ATOMIC_ACQUIRE);
        if (k == key) return &e;
        if (!k) return nullptr;
    }
    return nullptr;
}
} // namespace detail

/// The entry of a wrapped ibv_qp_ex, nullptr if hpcprof does not hold it.
inline ExQpEntry* findExQp(const ibv_qp_ex* qpx) {
    return detail::findIn<ExQpEntry, ibv_qp_ex, &ExQpEntry::qpx>(detail::g_exQps, qpx);
}

/// The entry of a wrapped ibv_cq_ex, nullptr if hpcprof does not hold it.
inline ExCqEntry* findExCq(const ibv_cq_ex* cq) {
    return detail::findIn<ExCqEntry, ibv_cq_ex, &ExCqEntry::cq>(detail::g_exCqs, cq);
}

/// Saves the provider's work-request entries of `qpx` and installs the wrappers (entries the
/// provider left NULL stay NULL). False when the table is full (the QP stays untouched).
bool trackExQp(ibv_qp_ex* qpx, uint16_t device);

/// Saves the provider's poll entries of `cq` and installs the wrappers. False when full.
bool trackExCq(ibv_cq_ex* cq, uint16_t device);

/// Puts the provider's entries back into the object (before it is freed) and forgets it.
/// Nothing happens for an object hpcprof does not hold.
void untrackExQp(ibv_qp* qp);
void untrackExCq(ibv_cq* cq);

} // namespace hpcprof::agent::ibverbs
