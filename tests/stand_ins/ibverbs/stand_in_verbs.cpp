// SPDX-License-Identifier: MIT
// TEST-ONLY stand-in for libibverbs.so.1: the same soname and symbol version (IBVERBS_1.1,
// ibv_reg_mr_iova2 at IBVERBS_1.8), one fake device "standin0" whose context function table is
// implemented on the CPU. Posted work requests complete into their CQ after a set delay
// (STAND_IN_VERBS_DELAY_US, default 200): sends are delivered to the connected QP of this process
// (its posted receive completes with the sent length), RDMA writes/reads copy memory. The
// extended APIs work the same way: ibv_create_qp_ex (send ops; ibv_qp_to_qp_ex at IBVERBS_1.6)
// batches ibv_wr_* into one post (refused before RTS), ibv_create_cq_ex polls the same queue with start/next/end.
// Never linked into the product; the test program picks it up through its RPATH.
#include <infiniband/verbs.h>

#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#undef ibv_reg_mr
#undef ibv_query_port

#define STAND_IN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

int64_t nowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t delayNs() {
    const char* v = std::getenv("STAND_IN_VERBS_DELAY_US");
    return (v && *v ? std::atoll(v) : 200) * 1000;
}

struct FakeCq {
    union { // first: the application's ibv_cq* / ibv_cq_ex* is this object
        ibv_cq cq;
        ibv_cq_ex cqx; // (ibv_create_cq_ex; its head has ibv_cq's layout)
    };
    std::mutex lock;
    struct Pending {
        int64_t readyNs;
        ibv_wc wc;
    };
    std::deque<Pending> pending;
    ibv_wc current{}; // the completion an ex poll points at
};

struct FakeSrq;

struct FakeQp {
    union { // first: the application's ibv_qp* is this object
        ibv_qp qp;
        ibv_qp_ex qpx; // (ibv_create_qp_ex with send ops; qp_base is qp)
    };
    bool isEx = false;
    bool sigAll = false;
    uint32_t remoteQpn = 0;
    std::mutex lock;
    std::deque<ibv_recv_wr> recvs; // posted receives (sg list not kept: length only)
    std::deque<uint64_t> recvLens;
    struct Built { // one work request of an ibv_wr_start batch
        ibv_send_wr wr;
        std::vector<ibv_sge> sges;
        std::string inlineData; // copied at ibv_wr_set_inline_data*, as inline data is
    };
    std::vector<Built> batch; // (owner: the thread between wr_start and wr_complete)
};

struct FakeSrq {
    ibv_srq srq;
    std::mutex lock;
    std::deque<uint64_t> wrIds;
};

std::mutex g_lock;
std::unordered_map<uint32_t, FakeQp*> g_qps; // qp_num -> QP (for delivering sends)
uint32_t g_nextQpn = 0x100;
int g_foreignOpsAtClose = 0;
int g_foreignExOpsAtDestroy = 0;
int g_openContexts = 0;

void complete(ibv_cq* cq, int64_t ready, const ibv_wc& wc) {
    auto* f = reinterpret_cast<FakeCq*>(cq);
    std::lock_guard<std::mutex> g(f->lock);
    f->pending.push_back({ready, wc});
}

uint64_t sgLen(const ibv_sge* sg, int n) {
    uint64_t s = 0;
    for (int i = 0; i < n; ++i) s += sg[i].length;
    return s;
}

ibv_wc_opcode wcOpcode(ibv_wr_opcode op) {
    switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_WC_FETCH_ADD;
    default: return IBV_WC_SEND;
    }
}

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    auto* q = reinterpret_cast<FakeQp*>(qp);
    int64_t ready = nowNs() + delayNs();
    for (ibv_send_wr* w = wr; w; w = w->next) {
        if (w->num_sge < 0 || w->opcode > IBV_WR_ATOMIC_FETCH_AND_ADD) {
            if (bad) *bad = w;
            return EINVAL;
        }
        uint64_t len = sgLen(w->sg_list, w->num_sge);
        if (w->opcode == IBV_WR_RDMA_WRITE || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
            char* dst = reinterpret_cast<char*>(w->wr.rdma.remote_addr);
            for (int i = 0; i < w->num_sge; ++i) {
                std::memcpy(dst, reinterpret_cast<void*>(w->sg_list[i].addr), w->sg_list[i].length);
                dst += w->sg_list[i].length;
            }
        }
        if (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM ||
            w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
            FakeQp* peer = nullptr;
            {
                std::lock_guard<std::mutex> g(g_lock);
                auto it = g_qps.find(q->remoteQpn);
                if (it != g_qps.end()) peer = it->second;
            }
            if (peer) {
                std::lock_guard<std::mutex> g(peer->lock);
                if (!peer->recvs.empty()) {
                    ibv_wc rwc{};
                    rwc.wr_id = peer->recvs.front().wr_id;
                    rwc.status = IBV_WC_SUCCESS;
                    rwc.opcode = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM
                                                                           : IBV_WC_RECV;
                    rwc.byte_len = uint32_t(len);
                    rwc.qp_num = peer->qp.qp_num;
                    rwc.src_qp = qp->qp_num;
                    peer->recvs.pop_front();
                    complete(peer->qp.recv_cq, ready, rwc);
                }
            }
        }
        if ((w->send_flags & IBV_SEND_SIGNALED) || q->sigAll) {
            ibv_wc wc{};
            wc.wr_id = w->wr_id;
            wc.status = IBV_WC_SUCCESS;
            wc.opcode = wcOpcode(w->opcode);
            wc.byte_len = uint32_t(len);
            wc.qp_num = qp->qp_num;
            complete(qp->send_cq, ready, wc);
        }
    }
    return 0;
}

int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    auto* q = reinterpret_cast<FakeQp*>(qp);
    std::lock_guard<std::mutex> g(q->lock);
    for (ibv_recv_wr* w = wr; w; w = w->next) {
        if (w->num_sge < 0) {
            if (bad) *bad = w;
            return EINVAL;
        }
        ibv_recv_wr copy = *w;
        copy.next = nullptr;
        q->recvs.push_back(copy);
    }
    return 0;
}

int postSrqRecv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr**) {
    auto* s = reinterpret_cast<FakeSrq*>(srq);
    std::lock_guard<std::mutex> g(s->lock);
    for (ibv_recv_wr* w = wr; w; w = w->next) s->wrIds.push_back(w->wr_id);
    return 0;
}

int pollCq(ibv_cq* cq, int n, ibv_wc* wc) {
    auto* f = reinterpret_cast<FakeCq*>(cq);
    int64_t now = nowNs();
    std::lock_guard<std::mutex> g(f->lock);
    int got = 0;
    while (got < n && !f->pending.empty() && f->pending.front().readyNs <= now) {
        wc[got++] = f->pending.front().wc;
        f->pending.pop_front();
    }
    return got;
}

int reqNotify(ibv_cq*, int) { return 0; }

// ---- extended QP: ibv_wr_* build a batch, ibv_wr_complete posts it like ibv_post_send -------

FakeQp* exQp(ibv_qp_ex* qpx) { return reinterpret_cast<FakeQp*>(qpx); }

void exBegin(ibv_qp_ex* qpx, ibv_wr_opcode op, uint32_t rkey = 0, uint64_t addr = 0) {
    FakeQp::Built b{};
    b.wr.wr_id = qpx->wr_id;
    b.wr.opcode = op;
    b.wr.send_flags = qpx->wr_flags;
    if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        b.wr.wr.atomic.rkey = rkey;
        b.wr.wr.atomic.remote_addr = addr;
    } else {
        b.wr.wr.rdma.rkey = rkey;
        b.wr.wr.rdma.remote_addr = addr;
    }
    exQp(qpx)->batch.push_back(std::move(b));
}

void exWrStart(ibv_qp_ex* qpx) { exQp(qpx)->batch.clear(); }
void exWrSend(ibv_qp_ex* qpx) { exBegin(qpx, IBV_WR_SEND); }
void exWrSendImm(ibv_qp_ex* qpx, __be32) { exBegin(qpx, IBV_WR_SEND_WITH_IMM); }
void exWrRdmaWrite(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
    exBegin(qpx, IBV_WR_RDMA_WRITE, rkey, addr);
}
void exWrRdmaWriteImm(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, __be32) {
    exBegin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
}
void exWrRdmaRead(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
    exBegin(qpx, IBV_WR_RDMA_READ, rkey, addr);
}
void exWrCmpSwp(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t, uint64_t) {
    exBegin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr);
}
void exWrFetchAdd(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t) {
    exBegin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr);
}

FakeQp::Built* exCurrent(ibv_qp_ex* qpx) {
    auto& b = exQp(qpx)->batch;
    return b.empty() ? nullptr : &b.back();
}
void exSetSge(ibv_qp_ex* qpx, uint32_t lkey, uint64_t addr, uint32_t len) {
    if (auto* b = exCurrent(qpx)) b->sges.assign(1, ibv_sge{addr, len, lkey});
}
void exSetSgeList(ibv_qp_ex* qpx, size_t n, const ibv_sge* list) {
    if (auto* b = exCurrent(qpx)) b->sges.assign(list, list + n);
}
void exSetInlineData(ibv_qp_ex* qpx, void* addr, size_t len) {
    if (auto* b = exCurrent(qpx)) b->inlineData.assign(static_cast<char*>(addr), len);
}
void exSetInlineDataList(ibv_qp_ex* qpx, size_t n, const ibv_data_buf* list) {
    auto* b = exCurrent(qpx);
    if (!b) return;
    b->inlineData.clear();
    for (size_t i = 0; i < n; ++i) b->inlineData.append(static_cast<char*>(list[i].addr), list[i].length);
}

int exWrComplete(ibv_qp_ex* qpx) {
    auto& batch = exQp(qpx)->batch;
    if (qpx->qp_base.state != IBV_QPS_RTS) { // a send queue takes work from RTS on
        batch.clear();
        return EINVAL;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
        auto& b = batch[i];
        if (!b.inlineData.empty())
            b.sges.assign(1, ibv_sge{uint64_t(b.inlineData.data()), uint32_t(b.inlineData.size()), 0});
        b.wr.sg_list = b.sges.data();
        b.wr.num_sge = int(b.sges.size());
        b.wr.next = i + 1 < batch.size() ? &batch[i + 1].wr : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    int rc = batch.empty() ? 0 : postSend(&qpx->qp_base, &batch[0].wr, &bad);
    batch.clear();
    return rc;
}
void exWrAbort(ibv_qp_ex* qpx) { exQp(qpx)->batch.clear(); }

/// Installs the builders the QP was asked for (send_ops_flags); false if one is not supported.
bool installSendOps(ibv_qp_ex* qpx, uint64_t ops) {
    constexpr uint64_t kSupported = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                    IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    if (ops & ~kSupported) return false;
    qpx->wr_start = exWrStart;
    qpx->wr_complete = exWrComplete;
    qpx->wr_abort = exWrAbort;
    qpx->wr_set_sge = exSetSge;
    qpx->wr_set_sge_list = exSetSgeList;
    qpx->wr_set_inline_data = exSetInlineData;
    qpx->wr_set_inline_data_list = exSetInlineDataList;
    if (ops & IBV_QP_EX_WITH_SEND) qpx->wr_send = exWrSend;
    if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM) qpx->wr_send_imm = exWrSendImm;
    if (ops & IBV_QP_EX_WITH_RDMA_WRITE) qpx->wr_rdma_write = exWrRdmaWrite;
    if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM) qpx->wr_rdma_write_imm = exWrRdmaWriteImm;
    if (ops & IBV_QP_EX_WITH_RDMA_READ) qpx->wr_rdma_read = exWrRdmaRead;
    if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) qpx->wr_atomic_cmp_swp = exWrCmpSwp;
    if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) qpx->wr_atomic_fetch_add = exWrFetchAdd;
    return true;
}

/// Whether every builder of `qpx` is the stand-in's own (or NULL).
bool sendOpsNative(const ibv_qp_ex* q) {
    return q->wr_start == exWrStart && q->wr_complete == exWrComplete && q->wr_abort == exWrAbort &&
           q->wr_set_sge == exSetSge && q->wr_set_sge_list == exSetSgeList &&
           q->wr_set_inline_data == exSetInlineData &&
           q->wr_set_inline_data_list == exSetInlineDataList &&
           (!q->wr_send || q->wr_send == exWrSend) && (!q->wr_send_imm || q->wr_send_imm == exWrSendImm) &&
           (!q->wr_rdma_write || q->wr_rdma_write == exWrRdmaWrite) &&
           (!q->wr_rdma_write_imm || q->wr_rdma_write_imm == exWrRdmaWriteImm) &&
           (!q->wr_rdma_read || q->wr_rdma_read == exWrRdmaRead) &&
           (!q->wr_atomic_cmp_swp || q->wr_atomic_cmp_swp == exWrCmpSwp) &&
           (!q->wr_atomic_fetch_add || q->wr_atomic_fetch_add == exWrFetchAdd);
}

ibv_qp* createQpCommon(ibv_context* ctx, ibv_pd* pd, const ibv_qp_init_attr& attr, FakeQp* q) {
    q->qp.context = ctx;
    q->qp.pd = pd;
    q->qp.send_cq = attr.send_cq;
    q->qp.recv_cq = attr.recv_cq;
    q->qp.srq = attr.srq;
    q->qp.qp_type = attr.qp_type;
    q->qp.state = IBV_QPS_RESET;
    q->sigAll = attr.sq_sig_all != 0;
    std::lock_guard<std::mutex> g(g_lock);
    q->qp.qp_num = g_nextQpn++;
    g_qps[q->qp.qp_num] = q;
    return &q->qp;
}

ibv_qp* createQpEx(ibv_context* ctx, ibv_qp_init_attr_ex* attr) {
    constexpr uint32_t kKnown = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    if ((attr->comp_mask & ~kKnown) || !(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    auto* q = new FakeQp();
    if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
        if (!installSendOps(&q->qpx, attr->send_ops_flags)) {
            delete q;
            errno = EOPNOTSUPP;
            return nullptr;
        }
        q->isEx = true;
        q->qpx.comp_mask = 0;
    }
    ibv_qp_init_attr a{};
    a.send_cq = attr->send_cq;
    a.recv_cq = attr->recv_cq;
    a.srq = attr->srq;
    a.cap = attr->cap;
    a.qp_type = attr->qp_type;
    a.sq_sig_all = attr->sq_sig_all;
    return createQpCommon(ctx, attr->pd, a, q);
}

// ---- extended CQ: start/next/end poll over the same queue as ibv_poll_cq ----------------------

FakeCq* fakeCq(ibv_cq_ex* cq) { return reinterpret_cast<FakeCq*>(cq); }

/// Takes the next ready completion into `current` (caller holds the lock).
bool exTake(FakeCq* f) {
    if (f->pending.empty() || f->pending.front().readyNs > nowNs()) return false;
    f->current = f->pending.front().wc;
    f->pending.pop_front();
    f->cqx.wr_id = f->current.wr_id;
    f->cqx.status = f->current.status;
    return true;
}

int exStartPoll(ibv_cq_ex* cq, ibv_poll_cq_attr*) {
    FakeCq* f = fakeCq(cq);
    f->lock.lock(); // held until ibv_end_poll, as real providers hold the CQ
    if (exTake(f)) return 0;
    f->lock.unlock();
    return ENOENT; // (ibv_end_poll is not called then)
}
int exNextPoll(ibv_cq_ex* cq) { return exTake(fakeCq(cq)) ? 0 : ENOENT; }
void exEndPoll(ibv_cq_ex* cq) { fakeCq(cq)->lock.unlock(); }
ibv_wc_opcode exReadOpcode(ibv_cq_ex* cq) { return fakeCq(cq)->current.opcode; }
uint32_t exReadVendorErr(ibv_cq_ex* cq) { return fakeCq(cq)->current.vendor_err; }
uint32_t exReadByteLen(ibv_cq_ex* cq) { return fakeCq(cq)->current.byte_len; }
uint32_t exReadQpNum(ibv_cq_ex* cq) { return fakeCq(cq)->current.qp_num; }
uint32_t exReadSrcQp(ibv_cq_ex* cq) { return fakeCq(cq)->current.src_qp; }
unsigned int exReadWcFlags(ibv_cq_ex* cq) { return fakeCq(cq)->current.wc_flags; }
__be32 exReadImm(ibv_cq_ex* cq) { return fakeCq(cq)->current.imm_data; }

bool pollOpsNative(const ibv_cq_ex* c) {
    return c->start_poll == exStartPoll && c->next_poll == exNextPoll && c->end_poll == exEndPoll;
}

ibv_cq_ex* createCqEx(ibv_context* ctx, ibv_cq_init_attr_ex* attr) {
    constexpr uint64_t kSupported = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
                                    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP;
    if ((attr->wc_flags & ~kSupported) || attr->comp_mask) {
        errno = EOPNOTSUPP;
        return nullptr;
    }
    auto* f = new FakeCq();
    f->cqx.context = ctx;
    f->cqx.cq_context = attr->cq_context;
    f->cqx.channel = attr->channel;
    f->cqx.cqe = int(attr->cqe);
    f->cqx.start_poll = exStartPoll;
    f->cqx.next_poll = exNextPoll;
    f->cqx.end_poll = exEndPoll;
    f->cqx.read_opcode = exReadOpcode;
    f->cqx.read_vendor_err = exReadVendorErr;
    f->cqx.read_wc_flags = exReadWcFlags;
    // Like real providers, readers only for the fields the program asked for.
    if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN) f->cqx.read_byte_len = exReadByteLen;
    if (attr->wc_flags & IBV_WC_EX_WITH_IMM) f->cqx.read_imm_data = exReadImm;
    if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM) f->cqx.read_qp_num = exReadQpNum;
    if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP) f->cqx.read_src_qp = exReadSrcQp;
    return &f->cqx;
}

int queryPortEx(ibv_context*, uint8_t port, ibv_port_attr* attr, size_t) {
    if (port != 1) return EINVAL;
    std::memset(attr, 0, sizeof(*attr));
    attr->state = IBV_PORT_ACTIVE;
    attr->active_mtu = IBV_MTU_4096;
    attr->lid = 7;
    attr->active_width = 2;  // 4x
    attr->active_speed = 32; // EDR: 4 x 25 Gbit/s = 100 Gbit/s
    attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
    return 0;
}

ibv_device g_device = [] {
    ibv_device d{};
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::strcpy(d.name, "standin0");
    std::strcpy(d.dev_name, "uverbs0");
    return d;
}();
ibv_device* g_list[2] = {&g_device, nullptr};

} // namespace

// ---- test hooks (not part of libibverbs) ---------------------------------------------------

/// Contexts closed whose data-path table did not hold the stand-in's own functions.
STAND_IN_EXPORT int stand_in_verbs_foreign_ops_at_close() { return g_foreignOpsAtClose; }
/// Whether `ctx`'s post_send entry is the stand-in's own (1) or something else (0).
STAND_IN_EXPORT int stand_in_verbs_ops_are_native(ibv_context* ctx) {
    return ctx->ops.post_send == postSend && ctx->ops.poll_cq == pollCq ? 1 : 0;
}
/// Whether the context's extended create entries are the stand-in's own.
STAND_IN_EXPORT int stand_in_verbs_ex_create_ops_are_native(ibv_context* ctx) {
    verbs_context* v = verbs_get_ctx(ctx);
    return v->create_qp_ex == createQpEx && v->create_cq_ex == createCqEx ? 1 : 0;
}
/// Whether an extended QP's / CQ's own entries are the stand-in's.
STAND_IN_EXPORT int stand_in_verbs_qp_ex_ops_are_native(ibv_qp_ex* qpx) {
    return sendOpsNative(qpx) ? 1 : 0;
}
STAND_IN_EXPORT int stand_in_verbs_cq_ex_ops_are_native(ibv_cq_ex* cq) {
    return pollOpsNative(cq) ? 1 : 0;
}
/// Extended QPs and CQs destroyed while their entries were not the stand-in's own.
STAND_IN_EXPORT int stand_in_verbs_foreign_ex_ops_at_destroy() { return g_foreignExOpsAtDestroy; }

// ---- libibverbs API ------------------------------------------------------------------------

STAND_IN_EXPORT ibv_device** ibv_get_device_list(int* n) {
    if (n) *n = 1;
    auto** copy = static_cast<ibv_device**>(std::malloc(sizeof(g_list)));
    std::memcpy(copy, g_list, sizeof(g_list));
    return copy;
}

STAND_IN_EXPORT void ibv_free_device_list(ibv_device** list) { std::free(list); }

STAND_IN_EXPORT const char* ibv_get_device_name(ibv_device* d) { return d->name; }

STAND_IN_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
    auto* v = static_cast<verbs_context*>(std::calloc(1, sizeof(verbs_context)));
    v->sz = sizeof(verbs_context);
    v->query_port = queryPortEx;
    v->create_qp_ex = createQpEx;
    v->create_cq_ex = createCqEx;
    ibv_context* ctx = &v->context;
    ctx->device = device;
    ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
    ctx->ops.post_send = postSend;
    ctx->ops.post_recv = postRecv;
    ctx->ops.post_srq_recv = postSrqRecv;
    ctx->ops.poll_cq = pollCq;
    ctx->ops.req_notify_cq = reqNotify;
    pthread_mutex_init(&ctx->mutex, nullptr);
    ++g_openContexts;
    return ctx;
}

STAND_IN_EXPORT int ibv_close_device(ibv_context* ctx) {
    if (ctx->ops.post_send != postSend || ctx->ops.post_recv != postRecv ||
        ctx->ops.post_srq_recv != postSrqRecv || ctx->ops.poll_cq != pollCq ||
        !stand_in_verbs_ex_create_ops_are_native(ctx))
        ++g_foreignOpsAtClose;
    --g_openContexts;
    std::free(verbs_get_ctx(ctx));
    return 0;
}

STAND_IN_EXPORT int ibv_query_device(ibv_context*, ibv_device_attr* attr) {
    std::memset(attr, 0, sizeof(*attr));
    attr->node_guid = 0x0002c90300a1b2c3ull;
    attr->phys_port_cnt = 1;
    attr->max_qp_wr = 4096;
    return 0;
}

// The exported (compat) form; the headers' inline ibv_query_port uses the extended entry.
STAND_IN_EXPORT int ibv_query_port(ibv_context* ctx, uint8_t port, _compat_ibv_port_attr* attr) {
    return queryPortEx(ctx, port, reinterpret_cast<ibv_port_attr*>(attr), sizeof(ibv_port_attr));
}

STAND_IN_EXPORT int ibv_query_gid(ibv_context*, uint8_t, int index, ibv_gid* gid) {
    std::memset(gid, 0, sizeof(*gid));
    if (index != 0) return EINVAL;
    gid->global.subnet_prefix = htobe64(0xfe80000000000000ull);
    gid->global.interface_id = htobe64(0x0002c90300a1b2c3ull);
    return 0;
}

STAND_IN_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* ctx) {
    auto* pd = static_cast<ibv_pd*>(std::calloc(1, sizeof(ibv_pd)));
    pd->context = ctx;
    return pd;
}

STAND_IN_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
    std::free(pd);
    return 0;
}

STAND_IN_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int) {
    static uint32_t key = 0x1000;
    auto* mr = static_cast<ibv_mr*>(std::calloc(1, sizeof(ibv_mr)));
    mr->context = pd->context;
    mr->pd = pd;
    mr->addr = addr;
    mr->length = length;
    mr->lkey = mr->rkey = ++key;
    return mr;
}

STAND_IN_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t,
                                         unsigned access) {
    return ibv_reg_mr(pd, addr, length, int(access));
}

STAND_IN_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
    std::free(mr);
    return 0;
}

STAND_IN_EXPORT ibv_cq* ibv_create_cq(ibv_context* ctx, int cqe, void* cqContext,
                                      ibv_comp_channel* channel, int) {
    auto* f = new FakeCq();
    f->cq.context = ctx;
    f->cq.cq_context = cqContext;
    f->cq.channel = channel;
    f->cq.cqe = cqe;
    return &f->cq;
}

STAND_IN_EXPORT int ibv_destroy_cq(ibv_cq* cq) {
    auto* f = reinterpret_cast<FakeCq*>(cq);
    if (f->cqx.start_poll && !pollOpsNative(&f->cqx)) ++g_foreignExOpsAtDestroy;
    delete f;
    return 0;
}

STAND_IN_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
    return createQpCommon(pd->context, pd, *attr, new FakeQp());
}

/// The extended view of a QP created with send ops (rdma-core: IBVERBS_1.6), else NULL.
STAND_IN_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
    auto* q = reinterpret_cast<FakeQp*>(qp);
    return q->isEx ? &q->qpx : nullptr;
}

STAND_IN_EXPORT int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
    auto* q = reinterpret_cast<FakeQp*>(qp);
    if (mask & IBV_QP_STATE) qp->state = attr->qp_state;
    if (mask & IBV_QP_DEST_QPN) q->remoteQpn = attr->dest_qp_num;
    return 0;
}

STAND_IN_EXPORT int ibv_destroy_qp(ibv_qp* qp) {
    {
        std::lock_guard<std::mutex> g(g_lock);
        g_qps.erase(qp->qp_num);
    }
    auto* q = reinterpret_cast<FakeQp*>(qp);
    if (q->isEx && !sendOpsNative(&q->qpx)) ++g_foreignExOpsAtDestroy;
    delete q;
    return 0;
}

STAND_IN_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
    auto* s = new FakeSrq();
    s->srq.context = pd->context;
    s->srq.pd = pd;
    s->srq.srq_context = attr->srq_context;
    return &s->srq;
}

STAND_IN_EXPORT int ibv_destroy_srq(ibv_srq* srq) {
    delete reinterpret_cast<FakeSrq*>(srq);
    return 0;
}
