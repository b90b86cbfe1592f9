// SPDX-License-Identifier: MIT
// The verbs contexts hpcprof has taken over. ibv_post_send, ibv_post_recv, ibv_post_srq_recv and
// ibv_poll_cq are static inline functions in <infiniband/verbs.h> that jump through
// ctx->ops.<entry>; there is no symbol to interpose. ctx->ops is embedded by value in every
// context, so hpcprof saves the provider's entries of one context here and points that
// context's entries at its wrappers (data_path.cpp), and puts the originals back on close.
// ibv_create_qp_ex / ibv_create_cq_ex are inline too, through the verbs_context's
// create_qp_ex / create_cq_ex, which are taken over the same way (ex_data_path.hpp).
//
// Thread-safety: takeOver/release run under a mutex (open/close are rare); find() is lock-free
// (acquire loads) and async-signal-safe, called on every wrapped data-path call.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace hpcprof::agent::ibverbs {

using PostSendFn = int (*)(ibv_qp*, ibv_send_wr*, ibv_send_wr**);
using PostRecvFn = int (*)(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**);
using PostSrqRecvFn = int (*)(ibv_srq*, ibv_recv_wr*, ibv_recv_wr**);
using PollCqFn = int (*)(ibv_cq*, int, ibv_wc*);
using CreateQpExFn = ibv_qp* (*)(ibv_context*, ibv_qp_init_attr_ex*);
using CreateCqExFn = ibv_cq_ex* (*)(ibv_context*, ibv_cq_init_attr_ex*);

/// The provider's entries of one taken-over context.
struct ContextEntry {
    ibv_context* ctx; ///< nullptr = free slot (published last, with release ordering)
    PostSendFn postSend;
    PostRecvFn postRecv;
    PostSrqRecvFn postSrqRecv;
    PollCqFn pollCq;
    // Extended entries of the verbs_context around the context (NULL: not provided, or the
    // context is not extended): the objects they create carry their own entries, which
    // ex_objects.hpp wraps.
    CreateQpExFn createQpEx;
    CreateCqExFn createCqEx;
    uint16_t device; ///< ordinal of the context in this process
};

constexpr int kMaxContexts = 64;

namespace detail {
extern ContextEntry g_contexts[kMaxContexts];
inline unsigned slotOf(const ibv_context* ctx) {
    return unsigned((reinterpret_cast<uintptr_t>(ctx) >> 6) * 0x9E3779B1u) % kMaxContexts;
}
} // namespace detail

/// The entry of a taken-over context, nullptr if hpcprof does not hold it.
inline const ContextEntry* find(const ibv_context* ctx) {
    unsigned s = detail::slotOf(ctx);
    for (int i = 0; i < kMaxContexts; ++i) {
        const ContextEntry& e = detail::g_contexts[(s + unsigned(i)) % kMaxContexts];
        const ibv_context* c = __atomic_load_n(&e.ctx, __ATOMIC_ACQUIRE);
        if (c == ctx) return &e;
        if (!c) return nullptr;
    }
    return nullptr;
}

/// Takes `ctx` over (idempotent): saves its data-path entries, installs the wrappers and records
/// the device with its port attributes. `adopted`: the context was opened where hpcprof did not
/// see it. Returns false when the table is full (the context stays untouched).
bool takeOver(ibv_context* ctx, bool adopted);

/// Puts back the provider's entries of `ctx` (before the provider frees it) and forgets it.
void release(ibv_context* ctx);

/// Takes a context over that was opened unseen (before the agent, or through dlvsym), at its
/// first resource call. Cheap when it is already held.
inline void adopt(ibv_context* ctx) {
    if (ctx && !find(ctx)) takeOver(ctx, true);
}

} // namespace hpcprof::agent::ibverbs
