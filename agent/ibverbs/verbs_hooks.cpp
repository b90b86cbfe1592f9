// SPDX-License-Identifier: MIT
// Exported libibverbs entry points (LD_PRELOAD): device open/close take a context over and give
// it back; resource calls record lifecycles (PD, MR with length and access, CQ, QP with type and
// state changes, SRQ) and adopt contexts hpcprof did not see being opened. Each forwards to
// the next definition, normally libibverbs' @@IBVERBS_1.1 (real_verbs.hpp). The context's
// extended create entries (ibv_create_qp_ex / ibv_create_cq_ex are inline calls through them)
// are wrapped here too; destroys give an extended object's own entries back first.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "common/real_function.hpp"
#include "context_table.hpp"
#include "data_path.hpp"
#include "ex_data_path.hpp"
#include "ex_objects.hpp"
#include "rdma_writer.hpp"
#include "real_verbs.hpp"
#include "wr_fold.hpp"

// verbs.h turns these into inline wrappers; the hooks define the exported functions themselves.
#undef ibv_reg_mr
#undef ibv_query_port

using namespace hpcprof::agent::ibverbs;
using hpcprof::schema::Op;
namespace raw = hpcprof::schema::raw;
namespace agent = hpcprof::agent;

namespace {

RealVerb<ibv_context* (*)(ibv_device*)> g_open("ibv_open_device");
RealVerb<int (*)(ibv_context*)> g_close("ibv_close_device");
RealVerb<ibv_pd* (*)(ibv_context*)> g_allocPd("ibv_alloc_pd");
RealVerb<int (*)(ibv_pd*)> g_deallocPd("ibv_dealloc_pd");
RealVerb<ibv_mr* (*)(ibv_pd*, void*, size_t, int)> g_regMr("ibv_reg_mr");
RealVerb<ibv_mr* (*)(ibv_pd*, void*, size_t, uint64_t, unsigned)> g_regMrIova2("ibv_reg_mr_iova2",
                                                                               "IBVERBS_1.8");
RealVerb<int (*)(ibv_mr*)> g_deregMr("ibv_dereg_mr");
RealVerb<ibv_cq* (*)(ibv_context*, int, void*, ibv_comp_channel*, int)> g_createCq("ibv_create_cq");
RealVerb<int (*)(ibv_cq*)> g_destroyCq("ibv_destroy_cq");
RealVerb<ibv_qp* (*)(ibv_pd*, ibv_qp_init_attr*)> g_createQp("ibv_create_qp");
RealVerb<int (*)(ibv_qp*, ibv_qp_attr*, int)> g_modifyQp("ibv_modify_qp");
RealVerb<int (*)(ibv_qp*)> g_destroyQp("ibv_destroy_qp");
RealVerb<ibv_srq* (*)(ibv_pd*, ibv_srq_init_attr*)> g_createSrq("ibv_create_srq");
RealVerb<int (*)(ibv_srq*)> g_destroySrq("ibv_destroy_srq");
RealVerb<ibv_qp_ex* (*)(ibv_qp*)> g_qpToQpEx("ibv_qp_to_qp_ex", "IBVERBS_1.6");

/// Device ordinal of a taken-over context (0xffff if hpcprof does not hold it).
uint16_t deviceOf(ibv_context* ctx) {
    const ContextEntry* e = ctx ? find(ctx) : nullptr;
    return e ? e->device : 0xffff;
}

struct ResourceFacts {
    raw::RdmaResource type;
    bool created;
    uint64_t handle = 0, length = 0, addr = 0;
    uint32_t access = 0, key = 0, qpNum = 0;
    uint8_t qpType = 0, sigAll = 0;
};

/// Writes the Call record of a resource call, then its Resource record (on success).
void recordResource(Op op, uint16_t device, uint64_t t0, uint64_t t1, int rc,
                    const ResourceFacts& f) {
    flushPolls();
    writeCall(op, device, f.qpNum, t0, t1, f.handle, 0, 0, rc);
    if (rc != 0) return;
    if (f.type == raw::RdmaResource::Qp) fold::noteQp(device, f.qpNum, f.created, f.sigAll);
    raw::RdmaRecord* r = reserveRdma();
    if (!r) return;
    r->action = raw::RdmaAction::Resource;
    r->device = device;
    r->qpNum = f.qpNum;
    r->ts = t1;
    r->u.resource.handle = f.handle;
    r->u.resource.length = f.length;
    r->u.resource.addr = f.addr;
    r->u.resource.access = f.access;
    r->u.resource.key = f.key;
    r->u.resource.type = f.type;
    r->u.resource.created = f.created ? 1 : 0;
    r->u.resource.qpType = f.qpType;
    r->u.resource.sigAll = f.sigAll;
    commitRdma(r);
}

/// A resource call returning a pointer: forward, then record when RDMA is recorded.
template <typename T, typename Call, typename Facts>
T* createCall(Op op, ibv_context* ctx, Call&& call, Facts&& facts) {
    if (!recordingRdma()) return call();
    adopt(ctx);
    uint64_t t0 = agent::now();
    T* obj = call();
    uint64_t t1 = agent::now();
    int rc = obj ? 0 : (errno ? errno : -1);
    ResourceFacts f = obj ? facts(obj) : ResourceFacts{raw::RdmaResource::Pd, true};
    recordResource(op, deviceOf(ctx), t0, t1, rc, f);
    return obj;
}

/// A destroy call: record before the object is gone.
template <typename Call>
int destroyCall(Op op, ibv_context* ctx, ResourceFacts f, Call&& call) {
    if (!recordingRdma()) return call();
    uint16_t device = deviceOf(ctx);
    uint64_t t0 = agent::now();
    int rc = call();
    uint64_t t1 = agent::now();
    recordResource(op, device, t0, t1, rc, f);
    return rc;
}

} // namespace

HPCPROF_HOOK ibv_context* ibv_open_device(ibv_device* device) {
    auto real = g_open.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    if (!recordingRdma()) return real(device);
    uint64_t t0 = agent::now();
    ibv_context* ctx = real(device);
    uint64_t t1 = agent::now();
    if (ctx) takeOver(ctx, false);
    flushPolls();
    writeCall(Op::IbvOpenDevice, deviceOf(ctx), 0, t0, t1, uint64_t(ctx), 0, 0,
              ctx ? 0 : (errno ? errno : -1));
    return ctx;
}

HPCPROF_HOOK int ibv_close_device(ibv_context* ctx) {
    auto real = g_close.get();
    if (!real) return ENOSYS;
    if (!find(ctx)) return real(ctx);
    uint16_t device = deviceOf(ctx);
    uint64_t t0 = agent::now();
    release(ctx); // before the provider frees the context
    int rc = real(ctx);
    uint64_t t1 = agent::now();
    if (recordingRdma()) writeCall(Op::IbvCloseDevice, device, 0, t0, t1, uint64_t(ctx), 0, 0, rc);
    return rc;
}

HPCPROF_HOOK ibv_pd* ibv_alloc_pd(ibv_context* ctx) {
    auto real = g_allocPd.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    return createCall<ibv_pd>(
        Op::IbvAllocPd, ctx, [&] { return real(ctx); },
        [](ibv_pd* pd) { return ResourceFacts{raw::RdmaResource::Pd, true, uint64_t(pd)}; });
}

HPCPROF_HOOK int ibv_dealloc_pd(ibv_pd* pd) {
    auto real = g_deallocPd.get();
    if (!real) return ENOSYS;
    return destroyCall(Op::IbvDeallocPd, pd->context,
                       ResourceFacts{raw::RdmaResource::Pd, false, uint64_t(pd)},
                       [&] { return real(pd); });
}

namespace {
ResourceFacts mrFacts(ibv_mr* mr, int access) {
    ResourceFacts f{raw::RdmaResource::Mr, true, uint64_t(mr)};
    f.length = mr->length;
    f.addr = uint64_t(mr->addr);
    f.access = uint32_t(access);
    f.key = mr->rkey;
    return f;
}
} // namespace

HPCPROF_HOOK ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
    auto real = g_regMr.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    return createCall<ibv_mr>(
        Op::IbvRegMr, pd->context, [&] { return real(pd, addr, length, access); },
        [&](ibv_mr* mr) { return mrFacts(mr, access); });
}

HPCPROF_HOOK ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                      unsigned int access) {
    auto real = g_regMrIova2.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    return createCall<ibv_mr>(
        Op::IbvRegMrIova2, pd->context, [&] { return real(pd, addr, length, iova, access); },
        [&](ibv_mr* mr) { return mrFacts(mr, int(access)); });
}

HPCPROF_HOOK int ibv_dereg_mr(ibv_mr* mr) {
    auto real = g_deregMr.get();
    if (!real) return ENOSYS;
    ResourceFacts f{raw::RdmaResource::Mr, false, uint64_t(mr)};
    f.length = mr->length;
    return destroyCall(Op::IbvDeregMr, mr->context, f, [&] { return real(mr); });
}

HPCPROF_HOOK ibv_cq* ibv_create_cq(ibv_context* ctx, int cqe, void* cqContext,
                                   ibv_comp_channel* channel, int vector) {
    auto real = g_createCq.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    return createCall<ibv_cq>(
        Op::IbvCreateCq, ctx, [&] { return real(ctx, cqe, cqContext, channel, vector); },
        [](ibv_cq* cq) {
            ResourceFacts f{raw::RdmaResource::Cq, true, uint64_t(cq)};
            f.length = uint64_t(cq->cqe);
            return f;
        });
}

HPCPROF_HOOK int ibv_destroy_cq(ibv_cq* cq) {
    auto real = g_destroyCq.get();
    if (!real) return ENOSYS;
    untrackExCq(cq); // (if the destroy fails the CQ stays usable, unwrapped)
    return destroyCall(Op::IbvDestroyCq, cq->context,
                       ResourceFacts{raw::RdmaResource::Cq, false, uint64_t(cq)},
                       [&] { return real(cq); });
}

HPCPROF_HOOK ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
    auto real = g_createQp.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    return createCall<ibv_qp>(
        Op::IbvCreateQp, pd->context, [&] { return real(pd, attr); },
        [&](ibv_qp* qp) {
            ResourceFacts f{raw::RdmaResource::Qp, true, uint64_t(qp)};
            f.qpNum = qp->qp_num;
            f.qpType = uint8_t(qp->qp_type);
            f.length = attr->cap.max_send_wr;
            f.addr = uint64_t(qp->send_cq);
            f.sigAll = attr->sq_sig_all ? 1 : 0;
            return f;
        });
}

HPCPROF_HOOK int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
    auto real = g_modifyQp.get();
    if (!real) return ENOSYS;
    if (!recordingRdma()) return real(qp, attr, mask);
    adopt(qp->context);
    uint64_t t0 = agent::now();
    int rc = real(qp, attr, mask);
    uint64_t t1 = agent::now();
    uint16_t device = deviceOf(qp->context);
    flushPolls();
    writeCall(Op::IbvModifyQp, device, qp->qp_num, t0, t1, uint64_t(qp), 0, 0, rc);
    raw::RdmaRecord* r = reserveRdma();
    if (!r) return rc;
    r->action = raw::RdmaAction::QpState;
    r->device = device;
    r->qpNum = qp->qp_num;
    r->ts = t1;
    r->u.qpState.attrMask = uint32_t(mask);
    r->u.qpState.rc = rc;
    r->u.qpState.state = (mask & IBV_QP_STATE) ? uint8_t(attr->qp_state) : 255;
    if (mask & IBV_QP_DEST_QPN) r->u.qpState.remoteQpn = attr->dest_qp_num;
    if (mask & IBV_QP_AV) {
        r->u.qpState.dlid = attr->ah_attr.dlid;
        r->u.qpState.port = attr->ah_attr.port_num;
        r->u.qpState.isGlobal = attr->ah_attr.is_global;
        if (attr->ah_attr.is_global)
            std::memcpy(r->u.qpState.gid, attr->ah_attr.grh.dgid.raw, sizeof(r->u.qpState.gid));
    }
    if ((mask & IBV_QP_PORT) && !r->u.qpState.port) r->u.qpState.port = attr->port_num;
    commitRdma(r);
    return rc;
}

HPCPROF_HOOK int ibv_destroy_qp(ibv_qp* qp) {
    auto real = g_destroyQp.get();
    if (!real) return ENOSYS;
    untrackExQp(qp);
    ResourceFacts f{raw::RdmaResource::Qp, false, uint64_t(qp)};
    f.qpNum = qp->qp_num;
    return destroyCall(Op::IbvDestroyQp, qp->context, f, [&] { return real(qp); });
}

HPCPROF_HOOK ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
    auto real = g_createSrq.get();
    if (!real) {
        errno = ENOSYS;
        return nullptr;
    }
    return createCall<ibv_srq>(
        Op::IbvCreateSrq, pd->context, [&] { return real(pd, attr); },
        [&](ibv_srq* srq) {
            ResourceFacts f{raw::RdmaResource::Srq, true, uint64_t(srq)};
            f.length = attr->attr.max_wr;
            return f;
        });
}

HPCPROF_HOOK int ibv_destroy_srq(ibv_srq* srq) {
    auto real = g_destroySrq.get();
    if (!real) return ENOSYS;
    return destroyCall(Op::IbvDestroySrq, srq->context,
                       ResourceFacts{raw::RdmaResource::Srq, false, uint64_t(srq)},
                       [&] { return real(srq); });
}

// ---- extended create entries (installed in the verbs_context by takeOver) ---------------------

namespace hpcprof::agent::ibverbs {

ibv_qp* wrappedCreateQpEx(ibv_context* ctx, ibv_qp_init_attr_ex* attr) {
    const ContextEntry* c = find(ctx);
    if (!c || !c->createQpEx) [[unlikely]] {
        errno = c ? EOPNOTSUPP : ENODEV;
        return nullptr;
    }
    if (!recordingRdma()) return c->createQpEx(ctx, attr);
    uint64_t t0 = agent::now();
    ibv_qp* qp = c->createQpEx(ctx, attr);
    uint64_t t1 = agent::now();
    int rc = qp ? 0 : (errno ? errno : -1);
    ResourceFacts f{raw::RdmaResource::Qp, true, uint64_t(qp)};
    if (qp) {
        f.qpNum = qp->qp_num;
        f.qpType = uint8_t(qp->qp_type);
        f.length = attr->cap.max_send_wr;
        f.addr = uint64_t(qp->send_cq);
        f.sigAll = attr->sq_sig_all ? 1 : 0;
        // Only a QP created with send ops has the ibv_wr_* entries (ibv_qp_to_qp_ex says so).
        auto toEx = g_qpToQpEx.get();
        ibv_qp_ex* qpx = (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && toEx ? toEx(qp) : nullptr;
        if (qpx) f.access = trackExQp(qpx, c->device) ? raw::kRdmaExApi : raw::kRdmaExUntracked;
    }
    recordResource(Op::IbvCreateQpEx, c->device, t0, t1, rc, f);
    return qp;
}

ibv_cq_ex* wrappedCreateCqEx(ibv_context* ctx, ibv_cq_init_attr_ex* attr) {
    const ContextEntry* c = find(ctx);
    if (!c || !c->createCqEx) [[unlikely]] {
        errno = c ? EOPNOTSUPP : ENODEV;
        return nullptr;
    }
    if (!recordingRdma()) return c->createCqEx(ctx, attr);
    // Completions pair with their work requests by QP number and say their length: ask the
    // provider for both fields (more fields only add readers the program may ignore); a
    // provider that refuses gets the program's own request.
    const uint64_t asked = attr->wc_flags;
    const uint64_t needed = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
    uint64_t t0 = agent::now();
    attr->wc_flags = asked | needed;
    ibv_cq_ex* cq = c->createCqEx(ctx, attr);
    attr->wc_flags = asked;
    if (!cq && (asked & needed) != needed) cq = c->createCqEx(ctx, attr);
    uint64_t t1 = agent::now();
    int rc = cq ? 0 : (errno ? errno : -1);
    ResourceFacts f{raw::RdmaResource::Cq, true, uint64_t(cq)};
    if (cq) {
        f.length = uint64_t(cq->cqe);
        f.access = trackExCq(cq, c->device) ? raw::kRdmaExApi : raw::kRdmaExUntracked;
    }
    recordResource(Op::IbvCreateCqEx, c->device, t0, t1, rc, f);
    return cq;
}

} // namespace hpcprof::agent::ibverbs
