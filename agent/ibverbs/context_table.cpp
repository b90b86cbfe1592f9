// SPDX-License-Identifier: MIT
#include "context_table.hpp"

#include <pthread.h>

#include <cstring>

#include "data_path.hpp"
#include "ex_data_path.hpp"
#include "hpcprof/launch/config.hpp"
#include "rdma_writer.hpp"
#include "real_verbs.hpp"
#include "wr_fold.hpp"

namespace hpcprof::agent::ibverbs {

namespace detail {
ContextEntry g_contexts[kMaxContexts];
}

namespace {

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
// Marks a released slot: linear probing must not stop there (see release()).
ibv_context* const kTombstone = reinterpret_cast<ibv_context*>(uintptr_t(1));
uint16_t g_nextDevice = 0;

RealVerb<int (*)(ibv_context*, ibv_device_attr*)> g_queryDevice("ibv_query_device");
RealVerb<int (*)(ibv_context*, uint8_t, ibv_port_attr*)> g_queryPortCompat("ibv_query_port");
RealVerb<int (*)(ibv_context*, uint8_t, int, ibv_gid*)> g_queryGid("ibv_query_gid");

/// Data rate of one lane in Mbit/s (after line encoding) for an active_speed code.
uint64_t laneMbps(uint8_t speed) {
    switch (speed) {
    case 1: return 2000;   // SDR
    case 2: return 4000;   // DDR
    case 4: return 8000;   // QDR
    case 8: return 10000;  // FDR10
    case 16: return 13640; // FDR
    case 32: return 25000; // EDR
    case 64: return 50000; // HDR
    case 128: return 100000; // NDR
    default: return 0;
    }
}

uint64_t lanes(uint8_t width) {
    switch (width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
    }
}

/// Port attributes the way ibv_query_port's inline wrapper gets them: the extended entry when
/// the provider has one, the exported compat function otherwise.
int queryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
    std::memset(attr, 0, sizeof(*attr));
    if (verbs_context* v = verbs_get_ctx_op(ctx, query_port))
        return v->query_port(ctx, port, attr, sizeof(*attr));
    auto fn = g_queryPortCompat.get();
    return fn ? fn(ctx, port, attr) : ENOSYS;
}

void recordDevice(ibv_context* ctx, uint16_t device, bool adopted) {
    uint64_t ts = agent::now();
    ibv_device_attr dattr{};
    auto qd = g_queryDevice.get();
    int ports = (qd && qd(ctx, &dattr) == 0) ? dattr.phys_port_cnt : 1;
    if (ports > 4) ports = 4;
    const char* name = ctx->device ? ctx->device->name : "";
    uint32_t nameId = agent::internString(name, strnlen(name, IBV_SYSFS_NAME_MAX));
    if (raw::RdmaRecord* r = reserveRdma()) {
        r->action = raw::RdmaAction::Device;
        r->device = device;
        r->ts = ts;
        r->u.device.context = uint64_t(ctx);
        r->u.device.guid = dattr.node_guid;
        r->u.device.nameId = nameId;
        r->u.device.eventRate = agent::readConfig().rdmaEventRate;
        r->u.device.ports = uint8_t(ports);
        r->u.device.flags = adopted ? raw::kRdmaAdopted : 0;
        commitRdma(r);
    }
    for (int p = 1; p <= ports; ++p) {
        ibv_port_attr pa;
        if (queryPort(ctx, uint8_t(p), &pa) != 0) continue;
        raw::RdmaRecord* r = reserveRdma();
        if (!r) return;
        r->action = raw::RdmaAction::Port;
        r->device = device;
        r->ts = ts;
        r->u.port.rateMbps = laneMbps(pa.active_speed) * lanes(pa.active_width);
        ibv_gid gid{};
        if (auto qg = g_queryGid.get(); qg && qg(ctx, uint8_t(p), 0, &gid) == 0)
            std::memcpy(r->u.port.gid, gid.raw, sizeof(r->u.port.gid));
        r->u.port.lid = pa.lid;
        r->u.port.port = uint8_t(p);
        r->u.port.state = uint8_t(pa.state);
        r->u.port.width = pa.active_width;
        r->u.port.speed = pa.active_speed;
        r->u.port.linkLayer = pa.link_layer;
        r->u.port.mtu = uint8_t(pa.active_mtu);
        commitRdma(r);
    }
}

} // namespace

bool takeOver(ibv_context* ctx, bool adopted) {
    if (!ctx) return false;
    fold::configure(); // before any wrapper can post through this context
    pthread_mutex_lock(&g_lock);
    if (find(ctx)) {
        pthread_mutex_unlock(&g_lock);
        return true;
    }
    unsigned s = detail::slotOf(ctx);
    ContextEntry* slot = nullptr;
    for (int i = 0; i < kMaxContexts && !slot; ++i) {
        ContextEntry& e = detail::g_contexts[(s + unsigned(i)) % kMaxContexts];
        if (!e.ctx || e.ctx == kTombstone) slot = &e;
    }
    if (!slot) {
        pthread_mutex_unlock(&g_lock);
        return false;
    }
    slot->postSend = ctx->ops.post_send;
    slot->postRecv = ctx->ops.post_recv;
    slot->postSrqRecv = ctx->ops.post_srq_recv;
    slot->pollCq = ctx->ops.poll_cq;
    slot->device = g_nextDevice++;
    __atomic_store_n(&slot->ctx, ctx, __ATOMIC_RELEASE);
    // Only entries the provider implements are wrapped (a NULL entry stays NULL).
    if (ctx->ops.post_send) ctx->ops.post_send = wrappedPostSend;
    if (ctx->ops.post_recv) ctx->ops.post_recv = wrappedPostRecv;
    if (ctx->ops.post_srq_recv) ctx->ops.post_srq_recv = wrappedPostSrqRecv;
    if (ctx->ops.poll_cq) ctx->ops.poll_cq = wrappedPollCq;
    // verbs_get_ctx_op: an extended context whose verbs_context is large enough and has the entry.
    slot->createQpEx = nullptr;
    slot->createCqEx = nullptr;
    if (verbs_context* v = verbs_get_ctx_op(ctx, create_qp_ex)) {
        slot->createQpEx = v->create_qp_ex;
        v->create_qp_ex = wrappedCreateQpEx;
    }
    if (verbs_context* v = verbs_get_ctx_op(ctx, create_cq_ex)) {
        slot->createCqEx = v->create_cq_ex;
        v->create_cq_ex = wrappedCreateCqEx;
    }
    uint16_t device = slot->device;
    pthread_mutex_unlock(&g_lock);
    recordDevice(ctx, device, adopted);
    return true;
}

void release(ibv_context* ctx) {
    if (!ctx) return;
    flushPolls();
    pthread_mutex_lock(&g_lock);
    unsigned s = detail::slotOf(ctx);
    for (int i = 0; i < kMaxContexts; ++i) {
        ContextEntry& e = detail::g_contexts[(s + unsigned(i)) % kMaxContexts];
        if (e.ctx != ctx) continue;
        ctx->ops.post_send = e.postSend;
        ctx->ops.post_recv = e.postRecv;
        ctx->ops.post_srq_recv = e.postSrqRecv;
        ctx->ops.poll_cq = e.pollCq;
        if (e.createQpEx) verbs_get_ctx(ctx)->create_qp_ex = e.createQpEx;
        if (e.createCqEx) verbs_get_ctx(ctx)->create_cq_ex = e.createCqEx;
        if (raw::RdmaRecord* r = reserveRdma()) {
            r->action = raw::RdmaAction::DeviceClose;
            r->device = e.device;
            r->ts = agent::now();
            r->u.device.context = uint64_t(ctx);
            commitRdma(r);
        }
        // Linear probing: a freed slot would cut the probe chain of later entries, so the
        // context is marked with a tombstone that matches no real context.
        __atomic_store_n(&e.ctx, kTombstone, __ATOMIC_RELEASE);
        break;
    }
    pthread_mutex_unlock(&g_lock);
}

} // namespace hpcprof::agent::ibverbs
