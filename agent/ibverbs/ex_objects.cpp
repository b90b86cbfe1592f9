// SPDX-License-Identifier: MIT
#include "ex_objects.hpp"

#include <pthread.h>

#include <cstddef>
#include <cstring>

#include "ex_data_path.hpp"

namespace hpcprof::agent::ibverbs {

namespace detail {
ExQpEntry g_exQps[kMaxExQps];
ExCqEntry g_exCqs[kMaxExCqs];
} // namespace detail

namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
// Marks a released slot: linear probing must not stop there.
template <typename T> T* tombstone() { return reinterpret_cast<T*>(uintptr_t(1)); }

/// A free (or tombstoned) slot in the probe chain of `key`, or the slot already holding it
/// (an address reused after a context was closed with the object still alive). Under g_lock.
template <typename Entry, typename Key, Key* Entry::*K, int N>
Entry* claim(Entry (&table)[N], Key* key) {
    if (Entry* e = detail::findIn<Entry, Key, K, N>(table, key)) return e;
    unsigned s = detail::exSlotOf(key, N);
    for (int i = 0; i < N; ++i) {
        Entry& e = table[(s + unsigned(i)) & unsigned(N - 1)];
        if (!(e.*K) || e.*K == tombstone<Key>()) return &e;
    }
    return nullptr;
}

/// Fills every field of `e` but its key (offset 0) from `fresh`: the key of a reused slot is a
/// tombstone that lock-free lookups of other objects must keep probing past, never NULL.
template <typename Entry> void fillBehindKey(Entry* e, const Entry& fresh) {
    constexpr size_t kKey = sizeof(void*);
    std::memcpy(reinterpret_cast<char*>(e) + kKey, reinterpret_cast<const char*>(&fresh) + kKey,
                sizeof(Entry) - kKey);
}
static_assert(offsetof(ExQpEntry, qpx) == 0 && offsetof(ExCqEntry, cq) == 0);

/// Installs `wrapper` in `slot` when the provider implements the entry (saved before).
template <typename Fn> void wrap(Fn& slot, Fn wrapper) {
    if (slot) slot = wrapper;
}

} // namespace

bool trackExQp(ibv_qp_ex* qpx, uint16_t device) {
    if (!qpx) return false;
    pthread_mutex_lock(&g_lock);
    ExQpEntry* e = claim<ExQpEntry, ibv_qp_ex, &ExQpEntry::qpx>(detail::g_exQps, qpx);
    if (!e) {
        pthread_mutex_unlock(&g_lock);
        return false;
    }
    ExQpEntry fresh{};
    fresh.qpNum = qpx->qp_base.qp_num;
    fresh.device = device;
    fresh.qpType = uint8_t(qpx->qp_base.qp_type);
    // The originals are read from the object before its entries change (the wrappers find
    // them through the published entry, so it is complete before the object points at them).
    fresh.wrStart = qpx->wr_start;
    fresh.wrComplete = qpx->wr_complete;
    fresh.wrAbort = qpx->wr_abort;
    fresh.wrSend = qpx->wr_send;
    fresh.wrSendImm = qpx->wr_send_imm;
    fresh.wrSendInv = qpx->wr_send_inv;
    fresh.wrSendTso = qpx->wr_send_tso;
    fresh.wrRdmaWrite = qpx->wr_rdma_write;
    fresh.wrRdmaWriteImm = qpx->wr_rdma_write_imm;
    fresh.wrRdmaRead = qpx->wr_rdma_read;
    fresh.wrAtomicCmpSwp = qpx->wr_atomic_cmp_swp;
    fresh.wrAtomicFetchAdd = qpx->wr_atomic_fetch_add;
    fresh.wrAtomicWrite = qpx->wr_atomic_write;
    fresh.wrLocalInv = qpx->wr_local_inv;
    fresh.wrBindMw = qpx->wr_bind_mw;
    fresh.wrSetSge = qpx->wr_set_sge;
    fresh.wrSetSgeList = qpx->wr_set_sge_list;
    fresh.wrSetInlineData = qpx->wr_set_inline_data;
    fresh.wrSetInlineDataList = qpx->wr_set_inline_data_list;
    fillBehindKey(e, fresh);
    __atomic_store_n(&e->qpx, qpx, __ATOMIC_RELEASE);
    wrap(qpx->wr_start, exWrStart);
    wrap(qpx->wr_complete, exWrComplete);
    wrap(qpx->wr_abort, exWrAbort);
    wrap(qpx->wr_send, exWrSend);
    wrap(qpx->wr_send_imm, exWrSendImm);
    wrap(qpx->wr_send_inv, exWrSendInv);
    wrap(qpx->wr_send_tso, exWrSendTso);
    wrap(qpx->wr_rdma_write, exWrRdmaWrite);
    wrap(qpx->wr_rdma_write_imm, exWrRdmaWriteImm);
    wrap(qpx->wr_rdma_read, exWrRdmaRead);
    wrap(qpx->wr_atomic_cmp_swp, exWrAtomicCmpSwp);
    wrap(qpx->wr_atomic_fetch_add, exWrAtomicFetchAdd);
    wrap(qpx->wr_atomic_write, exWrAtomicWrite);
    wrap(qpx->wr_local_inv, exWrLocalInv);
    wrap(qpx->wr_bind_mw, exWrBindMw);
    wrap(qpx->wr_set_sge, exWrSetSge);
    wrap(qpx->wr_set_sge_list, exWrSetSgeList);
    wrap(qpx->wr_set_inline_data, exWrSetInlineData);
    wrap(qpx->wr_set_inline_data_list, exWrSetInlineDataList);
    pthread_mutex_unlock(&g_lock);
    return true;
}

bool trackExCq(ibv_cq_ex* cq, uint16_t device) {
    if (!cq) return false;
    pthread_mutex_lock(&g_lock);
    ExCqEntry* e = claim<ExCqEntry, ibv_cq_ex, &ExCqEntry::cq>(detail::g_exCqs, cq);
    if (!e) {
        pthread_mutex_unlock(&g_lock);
        return false;
    }
    ExCqEntry fresh{};
    fresh.device = device;
    fresh.startPoll = cq->start_poll;
    fresh.nextPoll = cq->next_poll;
    fresh.endPoll = cq->end_poll;
    fillBehindKey(e, fresh);
    __atomic_store_n(&e->cq, cq, __ATOMIC_RELEASE);
    wrap(cq->start_poll, exStartPoll);
    wrap(cq->next_poll, exNextPoll);
    wrap(cq->end_poll, exEndPoll);
    pthread_mutex_unlock(&g_lock);
    return true;
}

namespace {
/// Restores `slot` if it still holds hpcprof's wrapper (the provider may have changed it).
template <typename Fn> void unwrap(Fn& slot, Fn saved, Fn wrapper) {
    if (slot == wrapper) slot = saved;
}
} // namespace

void untrackExQp(ibv_qp* qp) {
    // ibv_qp_ex begins with its ibv_qp (qp_base), so both have the same address.
    auto* qpx = reinterpret_cast<ibv_qp_ex*>(qp);
    if (!qp || !findExQp(qpx)) return;
    pthread_mutex_lock(&g_lock);
    if (ExQpEntry* e = findExQp(qpx)) {
        unwrap(qpx->wr_start, e->wrStart, exWrStart);
        unwrap(qpx->wr_complete, e->wrComplete, exWrComplete);
        unwrap(qpx->wr_abort, e->wrAbort, exWrAbort);
        unwrap(qpx->wr_send, e->wrSend, exWrSend);
        unwrap(qpx->wr_send_imm, e->wrSendImm, exWrSendImm);
        unwrap(qpx->wr_send_inv, e->wrSendInv, exWrSendInv);
        unwrap(qpx->wr_send_tso, e->wrSendTso, exWrSendTso);
        unwrap(qpx->wr_rdma_write, e->wrRdmaWrite, exWrRdmaWrite);
        unwrap(qpx->wr_rdma_write_imm, e->wrRdmaWriteImm, exWrRdmaWriteImm);
        unwrap(qpx->wr_rdma_read, e->wrRdmaRead, exWrRdmaRead);
        unwrap(qpx->wr_atomic_cmp_swp, e->wrAtomicCmpSwp, exWrAtomicCmpSwp);
        unwrap(qpx->wr_atomic_fetch_add, e->wrAtomicFetchAdd, exWrAtomicFetchAdd);
        unwrap(qpx->wr_atomic_write, e->wrAtomicWrite, exWrAtomicWrite);
        unwrap(qpx->wr_local_inv, e->wrLocalInv, exWrLocalInv);
        unwrap(qpx->wr_bind_mw, e->wrBindMw, exWrBindMw);
        unwrap(qpx->wr_set_sge, e->wrSetSge, exWrSetSge);
        unwrap(qpx->wr_set_sge_list, e->wrSetSgeList, exWrSetSgeList);
        unwrap(qpx->wr_set_inline_data, e->wrSetInlineData, exWrSetInlineData);
        unwrap(qpx->wr_set_inline_data_list, e->wrSetInlineDataList, exWrSetInlineDataList);
        __atomic_store_n(&e->qpx, tombstone<ibv_qp_ex>(), __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
}

void untrackExCq(ibv_cq* cq) {
    auto* cqx = reinterpret_cast<ibv_cq_ex*>(cq); // ibv_cq_ex_to_cq is this cast
    if (!cq || !findExCq(cqx)) return;
    pthread_mutex_lock(&g_lock);
    if (ExCqEntry* e = findExCq(cqx)) {
        unwrap(cqx->start_poll, e->startPoll, exStartPoll);
        unwrap(cqx->next_poll, e->nextPoll, exNextPoll);
        unwrap(cqx->end_poll, e->endPoll, exEndPoll);
        __atomic_store_n(&e->cq, tombstone<ibv_cq_ex>(), __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
}

} // namespace hpcprof::agent::ibverbs
