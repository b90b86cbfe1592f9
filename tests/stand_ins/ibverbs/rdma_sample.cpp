// SPDX-License-Identifier: MIT
// An unmodified verbs program for the RDMA tests, compiled against the real rdma-core headers
// (its ibv_post_send/ibv_poll_cq are the headers' inline calls through ctx->ops). It runs with the
// stand-in libibverbs (tests/stand_ins/ibverbs) and posts a known set of work requests:
//
//   basic    QP A -> QP B (RC, connected): B posts 2 receives (1000 + 2000 bytes) in one call;
//            A posts 2 signalled SENDs (wr 1: 1000 bytes; wr 2: 1500 + 500 bytes) in one call,
//            a signalled RDMA_WRITE (wr 3: 4096 bytes) and an unsignalled RDMA_WRITE (wr 4:
//            512 bytes); an SRQ gets 3 receives of 256 bytes in one call. Polls until A's CQ
//            returned wr 1, 2, 3 and B's CQ wr 101, 102.
//   threads  2 threads, each on its own looped-back QP and CQ: thread t posts 20 signalled
//            RDMA_WRITEs of (t+1)*1024 bytes, one per call, then polls all 20 completions.
//   adopt    the context is opened through dlvsym() (hpcprof does not see it); everything after
//            goes through the normal entry points: 2 signalled SENDs of 300 bytes on a looped QP.
//   bypass   everything through dlvsym() on libibverbs' handle, as NCCL does: invisible.
//   ex       basic's QP A -> QP B work requests through the extended APIs: A is an ibv_qp_ex
//            (ibv_create_qp_ex with send ops) on an ibv_cq_ex asking only for byte_len, B a plain
//            QP on an ibv_cq_ex. Batch 1: ibv_wr_send wr 1 (set_sge 1000) + ibv_wr_send wr 2
//            (set_sge_list 1500 + 500); batch 2: ibv_wr_rdma_write wr 3 (4096, signalled) +
//            ibv_wr_rdma_write wr 4 (512 bytes inline, unsignalled); batch 3: ibv_wr_rdma_read
//            wr 5 (256) + ibv_wr_atomic_fetch_add wr 7 (8); batch 4: ibv_wr_send wr 6 (64)
//            then ibv_wr_abort; before all of them, while A is not connected yet, batch 0:
//            ibv_wr_send wr 8 (100), which ibv_wr_complete refuses (EINVAL). Both CQs are polled with ibv_start_poll/ibv_next_poll/
//            ibv_end_poll until A returned wr 1, 2, 3, 5, 7 and B wr 101, 102.
//   stream   a busy looped QP: 1000 rounds of a chain of 4 signalled RDMA_WRITEs (64, 128, 256
//            and 512 bytes) and a single signalled RDMA_WRITE of 1024 bytes, each round polling
//            its 5 completions with ibv_poll_cq: 5000 requests, 1,984,000 bytes.
//   stream-ex  the same through ibv_qp_ex batches (a batch of 4, a batch of 1) and ibv_cq_ex
//            polls, plus every 10th round a batch of 2 SENDs that is aborted (never posted).
//   stream-split  stream's 1000 rounds posted by one thread while another polls their 5000
//            completions (at most 40 outstanding).
//   stream-sends  stream with SENDs instead of RDMA writes, each round posting first the 5
//            matching receives the same way (a chain of 4, a single one): 5000 sends and 5000
//            receives, 10,000 completions, 3,968,000 bytes.
//   starve   a looped QP: polls its empty CQ 1000 times, posts one signalled RDMA_WRITE (2048
//            bytes) and polls until its completion; prints "starving", then posts a receive that
//            no send ever matches and polls for its completion forever (hpcprof run --timeout
//            ends it: the hang tests).
//
// Prints what it did; exit status 0 when the stand-in behaved as expected.
#include <infiniband/verbs.h>

#include <dlfcn.h>

#include <atomic>
#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" int stand_in_verbs_foreign_ops_at_close();
extern "C" int stand_in_verbs_ops_are_native(ibv_context* ctx);
extern "C" int stand_in_verbs_ex_create_ops_are_native(ibv_context* ctx);
extern "C" int stand_in_verbs_qp_ex_ops_are_native(ibv_qp_ex* qpx);
extern "C" int stand_in_verbs_cq_ex_ops_are_native(ibv_cq_ex* cq);
extern "C" int stand_in_verbs_foreign_ex_ops_at_destroy();

namespace {

struct Verbs { // the entry points, either linked (PLT, hookable) or from dlvsym (bypass)
    ibv_device** (*getDeviceList)(int*) = ibv_get_device_list;
    ibv_context* (*open)(ibv_device*) = ibv_open_device;
    int (*close)(ibv_context*) = ibv_close_device;
    ibv_pd* (*allocPd)(ibv_context*) = ibv_alloc_pd;
    ibv_mr* (*regMr)(ibv_pd*, void*, size_t, int) = nullptr;
    ibv_cq* (*createCq)(ibv_context*, int, void*, ibv_comp_channel*, int) = ibv_create_cq;
    ibv_qp* (*createQp)(ibv_pd*, ibv_qp_init_attr*) = ibv_create_qp;
    int (*modifyQp)(ibv_qp*, ibv_qp_attr*, int) = ibv_modify_qp;
};

template <typename F> void load(void* h, F& f, const char* name) {
    f = reinterpret_cast<F>(dlvsym(h, name, "IBVERBS_1.1"));
    if (!f) {
        std::fprintf(stderr, "rdma_sample: dlvsym %s failed\n", name);
        std::exit(3);
    }
}

Verbs dlvsymVerbs() {
    void* h = dlopen("libibverbs.so.1", RTLD_NOW);
    if (!h) std::exit(3);
    Verbs v;
    load(h, v.getDeviceList, "ibv_get_device_list");
    load(h, v.open, "ibv_open_device");
    load(h, v.close, "ibv_close_device");
    load(h, v.allocPd, "ibv_alloc_pd");
    load(h, v.regMr, "ibv_reg_mr");
    load(h, v.createCq, "ibv_create_cq");
    load(h, v.createQp, "ibv_create_qp");
    load(h, v.modifyQp, "ibv_modify_qp");
    return v;
}

ibv_mr* regMr(const Verbs& v, ibv_pd* pd, void* addr, size_t len) {
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    return v.regMr ? v.regMr(pd, addr, len, access) : ibv_reg_mr(pd, addr, len, access);
}

ibv_qp* createQp(const Verbs& v, ibv_pd* pd, ibv_cq* cq, ibv_srq* srq = nullptr) {
    ibv_qp_init_attr a{};
    a.send_cq = cq;
    a.recv_cq = cq;
    a.srq = srq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = 64;
    a.cap.max_recv_wr = 64;
    a.cap.max_send_sge = 2;
    a.cap.max_recv_sge = 1;
    return v.createQp(pd, &a);
}

/// RESET -> INIT -> RTR (connected to remoteQpn at LID 7) -> RTS.
void connect(const Verbs& v, ibv_qp* qp, uint32_t remoteQpn) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    v.modifyQp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    a = {};
    a.qp_state = IBV_QPS_RTR;
    a.dest_qp_num = remoteQpn;
    a.path_mtu = IBV_MTU_4096;
    a.ah_attr.dlid = 7;
    a.ah_attr.port_num = 1;
    v.modifyQp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                           IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    a = {};
    a.qp_state = IBV_QPS_RTS;
    v.modifyQp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                           IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/// Polls `cq` until `want` completions arrived; returns the number of empty polls.
long pollAll(ibv_cq* cq, int want, std::vector<ibv_wc>& out) {
    long empty = 0;
    ibv_wc wc[4];
    while (int(out.size()) < want) {
        int n = ibv_poll_cq(cq, 4, wc);
        if (n < 0) std::exit(4);
        if (n == 0) ++empty;
        for (int i = 0; i < n; ++i) out.push_back(wc[i]);
    }
    return empty;
}

ibv_send_wr sendWr(uint64_t id, ibv_sge* sg, int nsge, ibv_wr_opcode op, bool signaled) {
    ibv_send_wr w{};
    w.wr_id = id;
    w.sg_list = sg;
    w.num_sge = nsge;
    w.opcode = op;
    w.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
    return w;
}

// Two receives (wr_id 101 and 102, 1000 and 2000 bytes of `buf`) in one ibv_post_recv.
int postTwoReceives(ibv_qp* qp, char* buf, uint32_t lkey) {
    ibv_sge rs[2] = {{uint64_t(buf), 1000, lkey}, {uint64_t(buf + 1000), 2000, lkey}};
    ibv_recv_wr rw[2] = {};
    rw[0].wr_id = 101, rw[0].sg_list = &rs[0], rw[0].num_sge = 1, rw[0].next = &rw[1];
    rw[1].wr_id = 102, rw[1].sg_list = &rs[1], rw[1].num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, rw, &bad);
}

int basic(const Verbs& v) {
    int n = 0;
    ibv_device** list = v.getDeviceList(&n);
    ibv_context* ctx = v.open(list[0]);
    std::printf("native_ops_after_open=%d\n", stand_in_verbs_ops_are_native(ctx));
    ibv_pd* pd = v.allocPd(ctx);
    static char a[65536], b[65536];
    for (size_t i = 0; i < sizeof(a); ++i) a[i] = char(i * 7);
    ibv_mr* ma = regMr(v, pd, a, sizeof(a));
    ibv_mr* mb = regMr(v, pd, b, sizeof(b));
    ibv_cq* cqa = v.createCq(ctx, 64, nullptr, nullptr, 0);
    ibv_cq* cqb = v.createCq(ctx, 64, nullptr, nullptr, 0);
    ibv_qp* qa = createQp(v, pd, cqa);
    ibv_qp* qb = createQp(v, pd, cqb);
    connect(v, qa, qb->qp_num);
    connect(v, qb, qa->qp_num);
    std::printf("qp_a=%u qp_b=%u\n", qa->qp_num, qb->qp_num);

    if (postTwoReceives(qb, b, mb->lkey)) return 5;

    ibv_sge s1 = {uint64_t(a), 1000, ma->lkey};
    ibv_sge s2[2] = {{uint64_t(a + 1000), 1500, ma->lkey}, {uint64_t(a + 2500), 500, ma->lkey}};
    ibv_send_wr sw[2] = {sendWr(1, &s1, 1, IBV_WR_SEND, true), sendWr(2, s2, 2, IBV_WR_SEND, true)};
    sw[0].next = &sw[1];
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qa, sw, &bad)) return 5;

    ibv_sge s3 = {uint64_t(a), 4096, ma->lkey};
    ibv_send_wr w3 = sendWr(3, &s3, 1, IBV_WR_RDMA_WRITE, true);
    w3.wr.rdma.remote_addr = uint64_t(b + 8192);
    w3.wr.rdma.rkey = mb->rkey;
    if (ibv_post_send(qa, &w3, &bad)) return 5;
    ibv_sge s4 = {uint64_t(a), 512, ma->lkey};
    ibv_send_wr w4 = sendWr(4, &s4, 1, IBV_WR_RDMA_WRITE, false);
    w4.wr.rdma.remote_addr = uint64_t(b + 16384);
    w4.wr.rdma.rkey = mb->rkey;
    if (ibv_post_send(qa, &w4, &bad)) return 5;

    ibv_srq_init_attr sa{};
    sa.attr.max_wr = 16;
    sa.attr.max_sge = 1;
    ibv_srq* srq = ibv_create_srq(pd, &sa);
    ibv_sge ss[3] = {{uint64_t(b + 32768), 256, mb->lkey}, {uint64_t(b + 33024), 256, mb->lkey},
                     {uint64_t(b + 33280), 256, mb->lkey}};
    ibv_recv_wr srw[3] = {};
    for (int i = 0; i < 3; ++i) {
        srw[i].wr_id = uint64_t(201 + i);
        srw[i].sg_list = &ss[i];
        srw[i].num_sge = 1;
        srw[i].next = i < 2 ? &srw[i + 1] : nullptr;
    }
    ibv_recv_wr* badr = nullptr;
    if (ibv_post_srq_recv(srq, srw, &badr)) return 5;

    std::vector<ibv_wc> wa, wb;
    long emptyA = pollAll(cqa, 3, wa);
    long emptyB = pollAll(cqb, 2, wb);
    bool writeOk = std::memcmp(b + 8192, a, 4096) == 0 && std::memcmp(b + 16384, a, 512) == 0;
    std::printf("completions_a=%zu completions_b=%zu empty_polls_a=%ld empty_polls_b=%ld "
                "write_ok=%d\n",
                wa.size(), wb.size(), emptyA, emptyB, writeOk ? 1 : 0);
    for (const auto& w : wa) std::printf("wc cq=a wr=%llu len=%u\n", (unsigned long long)w.wr_id, w.byte_len);
    for (const auto& w : wb) std::printf("wc cq=b wr=%llu len=%u\n", (unsigned long long)w.wr_id, w.byte_len);

    ibv_destroy_srq(srq);
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    ibv_destroy_cq(cqa);
    ibv_destroy_cq(cqb);
    ibv_dereg_mr(ma);
    ibv_dereg_mr(mb);
    ibv_dealloc_pd(pd);
    v.close(ctx);
    ibv_free_device_list(list);
    std::printf("foreign_ops_at_close=%d\n", stand_in_verbs_foreign_ops_at_close());
    return writeOk && wa.size() == 3 && wb.size() == 2 ? 0 : 6;
}

int threads(const Verbs& v) {
    ibv_device** list = v.getDeviceList(nullptr);
    ibv_context* ctx = v.open(list[0]);
    ibv_pd* pd = v.allocPd(ctx);
    int failures = 0;
    auto worker = [&](int t) {
        std::vector<char> buf(65536);
        ibv_mr* mr = regMr(v, pd, buf.data(), buf.size());
        ibv_cq* cq = v.createCq(ctx, 64, nullptr, nullptr, 0);
        ibv_qp* qp = createQp(v, pd, cq);
        connect(v, qp, qp->qp_num); // looped back
        uint32_t len = uint32_t(t + 1) * 1024;
        for (int i = 0; i < 20; ++i) {
            ibv_sge sg = {uint64_t(buf.data()), len, mr->lkey};
            ibv_send_wr w = sendWr(uint64_t(1000 * (t + 1) + i), &sg, 1, IBV_WR_RDMA_WRITE, true);
            w.wr.rdma.remote_addr = uint64_t(buf.data() + 32768);
            w.wr.rdma.rkey = mr->rkey;
            ibv_send_wr* bad = nullptr;
            if (ibv_post_send(qp, &w, &bad)) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        }
        std::vector<ibv_wc> wc;
        pollAll(cq, 20, wc);
        std::printf("thread=%d qp=%u completions=%zu\n", t, qp->qp_num, wc.size());
        ibv_destroy_qp(qp);
        ibv_destroy_cq(cq);
        ibv_dereg_mr(mr);
    };
    std::thread t0(worker, 0), t1(worker, 1);
    t0.join();
    t1.join();
    ibv_dealloc_pd(pd);
    v.close(ctx);
    ibv_free_device_list(list);
    return failures == 0 ? 0 : 6;
}

/// One looped QP, 2 signalled SENDs of 300 bytes with matching receives.
int loopTwoSends(const Verbs& v, ibv_context* ctx) {
    ibv_pd* pd = v.allocPd(ctx);
    static char buf[4096];
    ibv_mr* mr = regMr(v, pd, buf, sizeof(buf));
    ibv_cq* cq = v.createCq(ctx, 16, nullptr, nullptr, 0);
    ibv_qp* qp = createQp(v, pd, cq);
    connect(v, qp, qp->qp_num);
    ibv_sge sg = {uint64_t(buf), 300, mr->lkey};
    for (int i = 0; i < 2; ++i) {
        ibv_recv_wr r{};
        r.wr_id = uint64_t(50 + i);
        r.sg_list = &sg;
        r.num_sge = 1;
        ibv_recv_wr* badr = nullptr;
        ibv_post_recv(qp, &r, &badr);
        ibv_send_wr w = sendWr(uint64_t(60 + i), &sg, 1, IBV_WR_SEND, true);
        ibv_send_wr* bad = nullptr;
        ibv_post_send(qp, &w, &bad);
    }
    std::vector<ibv_wc> wc;
    pollAll(cq, 4, wc);
    std::printf("completions=%zu native_ops=%d\n", wc.size(), stand_in_verbs_ops_are_native(ctx));
    ibv_destroy_qp(qp);
    ibv_destroy_cq(cq);
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    return wc.size() == 4 ? 0 : 6;
}

/// Polls `cq` with ibv_start_poll/ibv_next_poll/ibv_end_poll until `want` completions arrived
/// (wr_id, byte_len); returns the number of empty polls (ibv_start_poll said ENOENT).
long pollAllEx(ibv_cq_ex* cq, int want, std::vector<std::pair<uint64_t, uint32_t>>& out) {
    long empty = 0;
    ibv_poll_cq_attr attr{};
    while (int(out.size()) < want) {
        int rc = ibv_start_poll(cq, &attr);
        if (rc == ENOENT) {
            ++empty;
            continue;
        }
        if (rc != 0) std::exit(4);
        do {
            if (cq->status != IBV_WC_SUCCESS) std::exit(4);
            out.emplace_back(cq->wr_id, ibv_wc_read_byte_len(cq));
        } while (ibv_next_poll(cq) == 0);
        ibv_end_poll(cq);
    }
    return empty;
}

/// Attributes of an RC QP on `cq` created through ibv_create_qp_ex with the given send ops.
ibv_qp_init_attr_ex exQpAttr(ibv_cq_ex* cq, ibv_pd* pd, uint32_t maxSendSge, uint64_t sendOps) {
    ibv_qp_init_attr_ex a{};
    a.send_cq = ibv_cq_ex_to_cq(cq);
    a.recv_cq = ibv_cq_ex_to_cq(cq);
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = 64;
    a.cap.max_recv_wr = 64;
    a.cap.max_send_sge = maxSendSge;
    a.cap.max_recv_sge = 1;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.pd = pd;
    a.send_ops_flags = sendOps;
    return a;
}

ibv_cq_ex* createCqEx(ibv_context* ctx, uint64_t wcFlags) {
    ibv_cq_init_attr_ex a{};
    a.cqe = 64;
    a.wc_flags = wcFlags;
    return ibv_create_cq_ex(ctx, &a);
}

int ex(const Verbs& v) {
    ibv_device** list = v.getDeviceList(nullptr);
    ibv_context* ctx = v.open(list[0]);
    ibv_pd* pd = v.allocPd(ctx);
    static char a[65536], b[65536];
    for (size_t i = 0; i < sizeof(a); ++i) a[i] = char(i * 7);
    ibv_mr* ma = regMr(v, pd, a, sizeof(a));
    ibv_mr* mb = regMr(v, pd, b, sizeof(b));
    ibv_cq_ex* cqa = createCqEx(ctx, IBV_WC_EX_WITH_BYTE_LEN); // no QP number asked for
    ibv_cq_ex* cqb = createCqEx(ctx, IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM);
    if (!cqa || !cqb) return 7;
    ibv_qp_init_attr_ex qa_attr =
        exQpAttr(cqa, pd, 2, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
                                 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
    qa_attr.cap.max_inline_data = 512;
    ibv_qp* qa = ibv_create_qp_ex(ctx, &qa_attr);
    ibv_qp* qb = createQp(v, pd, ibv_cq_ex_to_cq(cqb));
    if (!qa || !qb) return 7;
    ibv_qp_ex* qx = ibv_qp_to_qp_ex(qa);
    if (!qx) return 7;
    ibv_wr_start(qx); // batch 0: A is still in RESET, the provider refuses the batch
    qx->wr_id = 8;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qx);
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a), 100);
    int early = ibv_wr_complete(qx);
    if (early != EINVAL) return 5;
    connect(v, qa, qb->qp_num);
    connect(v, qb, qa->qp_num);
    std::printf("early_batch_rc=%d\n", early);
    std::printf("qp_a=%u qp_b=%u native_ex_create_ops=%d native_qp_ex_ops=%d native_cq_ex_ops=%d\n",
                qa->qp_num, qb->qp_num, stand_in_verbs_ex_create_ops_are_native(ctx),
                stand_in_verbs_qp_ex_ops_are_native(qx), stand_in_verbs_cq_ex_ops_are_native(cqa));

    if (postTwoReceives(qb, b, mb->lkey)) return 5;

    ibv_wr_start(qx); // batch 1: two SENDs
    qx->wr_id = 1;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qx);
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a), 1000);
    qx->wr_id = 2;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qx);
    ibv_sge s2[2] = {{uint64_t(a + 1000), 1500, ma->lkey}, {uint64_t(a + 2500), 500, ma->lkey}};
    ibv_wr_set_sge_list(qx, 2, s2);
    if (ibv_wr_complete(qx)) return 5;

    ibv_wr_start(qx); // batch 2: RDMA writes, the second inline and unsignalled
    qx->wr_id = 3;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qx, mb->rkey, uint64_t(b + 8192));
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a), 4096);
    qx->wr_id = 4;
    qx->wr_flags = IBV_SEND_INLINE;
    ibv_wr_rdma_write(qx, mb->rkey, uint64_t(b + 16384));
    ibv_wr_set_inline_data(qx, a, 512);
    if (ibv_wr_complete(qx)) return 5;

    ibv_wr_start(qx); // batch 3: a read and an atomic
    qx->wr_id = 5;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_read(qx, mb->rkey, uint64_t(b + 24576));
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a + 40960), 256);
    qx->wr_id = 7;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_atomic_fetch_add(qx, mb->rkey, uint64_t(b + 32768), 1);
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a + 49152), 8);
    if (ibv_wr_complete(qx)) return 5;

    ibv_wr_start(qx); // batch 4: built, then abandoned
    qx->wr_id = 6;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qx);
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a), 64);
    ibv_wr_abort(qx);

    ibv_wr_start(qx); // batch 5: one RDMA write, the most common batch
    qx->wr_id = 9;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qx, mb->rkey, uint64_t(b + 40960));
    ibv_wr_set_sge(qx, ma->lkey, uint64_t(a), 128);
    if (ibv_wr_complete(qx)) return 5;

    std::vector<std::pair<uint64_t, uint32_t>> wa, wb;
    long emptyA = pollAllEx(cqa, 6, wa);
    long emptyB = pollAllEx(cqb, 2, wb);
    bool writeOk = std::memcmp(b + 8192, a, 4096) == 0 && std::memcmp(b + 16384, a, 512) == 0;
    std::printf("completions_a=%zu completions_b=%zu empty_polls_a=%ld empty_polls_b=%ld "
                "write_ok=%d\n",
                wa.size(), wb.size(), emptyA, emptyB, writeOk ? 1 : 0);
    for (const auto& [id, len] : wa) std::printf("wc cq=a wr=%llu len=%u\n", (unsigned long long)id, len);
    for (const auto& [id, len] : wb) std::printf("wc cq=b wr=%llu len=%u\n", (unsigned long long)id, len);

    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqa));
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqb));
    ibv_dereg_mr(ma);
    ibv_dereg_mr(mb);
    ibv_dealloc_pd(pd);
    v.close(ctx);
    ibv_free_device_list(list);
    std::printf("foreign_ex_ops_at_destroy=%d foreign_ops_at_close=%d\n",
                stand_in_verbs_foreign_ex_ops_at_destroy(), stand_in_verbs_foreign_ops_at_close());
    return writeOk && wa.size() == 6 && wb.size() == 2 ? 0 : 6;
}

constexpr int kStreamRounds = 1000;
constexpr uint32_t kStreamSizes[5] = {64, 128, 256, 512, 1024};

/// A looped RC QP on `cq` in a fresh context, for the stream modes.
struct Loop {
    ibv_device** list;
    ibv_context* ctx;
    ibv_pd* pd;
    ibv_mr* mr;
};
Loop openLoop(const Verbs& v, char* buf, size_t len) {
    Loop l{};
    l.list = v.getDeviceList(nullptr);
    l.ctx = v.open(l.list[0]);
    l.pd = v.allocPd(l.ctx);
    l.mr = regMr(v, l.pd, buf, len);
    return l;
}
void closeLoop(const Verbs& v, Loop& l) {
    ibv_dereg_mr(l.mr);
    ibv_dealloc_pd(l.pd);
    v.close(l.ctx);
    ibv_free_device_list(l.list);
}

enum class Stream { Writes, Split, Sends };
constexpr uint64_t kRecvIds = 1'000'000; // receive wr_ids: kRecvIds + the matching send's

/// One stream round on `qp`: a chain of 4 RDMA writes and a single one (Sends: first the 5
/// matching receives the same way, then 5 SENDs); 0 = posted.
int postRound(ibv_qp* qp, const Loop& l, char* buf, int round, Stream kind) {
    ibv_sge sg[5];
    ibv_send_wr w[5];
    ibv_recv_wr r[5];
    for (int i = 0; i < 5; ++i) {
        uint64_t id = uint64_t(round * 5 + i);
        sg[i] = {uint64_t(buf), kStreamSizes[i], l.mr->lkey};
        bool sends = kind == Stream::Sends;
        w[i] = sendWr(id, &sg[i], 1, sends ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, true);
        w[i].wr.rdma.remote_addr = uint64_t(buf + 4096);
        w[i].wr.rdma.rkey = l.mr->rkey;
        w[i].next = i < 3 ? &w[i + 1] : nullptr; // a chain of 4, then a single one
        r[i] = {};
        r[i].wr_id = kRecvIds + id;
        r[i].sg_list = &sg[i];
        r[i].num_sge = 1;
        r[i].next = i < 3 ? &r[i + 1] : nullptr;
    }
    ibv_recv_wr* badr = nullptr;
    if (kind == Stream::Sends && (ibv_post_recv(qp, &r[0], &badr) || ibv_post_recv(qp, &r[4], &badr)))
        return 5;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp, &w[0], &bad) || ibv_post_send(qp, &w[4], &bad) ? 5 : 0;
}

int stream(const Verbs& v, Stream kind) {
    static char buf[8192];
    Loop l = openLoop(v, buf, sizeof(buf));
    ibv_cq* cq = v.createCq(l.ctx, 64, nullptr, nullptr, 0);
    ibv_qp* qp = createQp(v, l.pd, cq);
    connect(v, qp, qp->qp_num);
    long completions = 0, bytes = 0;
    const long perRound = kind == Stream::Sends ? 10 : 5;
    if (kind == Stream::Split) {
        std::atomic<long> posted{0}, polled{0};
        int failed = 0;
        std::thread poster([&] {
            for (int round = 0; round < kStreamRounds && !failed; ++round) {
                while (posted.load() - polled.load() > 35) std::this_thread::yield();
                failed = postRound(qp, l, buf, round, kind);
                posted += 5;
            }
        });
        ibv_wc wc[4];
        while (completions < 5L * kStreamRounds && !failed) {
            int n = ibv_poll_cq(cq, 4, wc);
            for (int i = 0; i < n; ++i) {
                if (wc[i].status != IBV_WC_SUCCESS) failed = 6;
                bytes += long(kStreamSizes[wc[i].wr_id % 5]);
            }
            completions += n > 0 ? n : 0;
            polled += n > 0 ? n : 0;
        }
        poster.join();
        if (failed) return failed;
    } else {
        for (int round = 0; round < kStreamRounds; ++round) {
            if (postRound(qp, l, buf, round, kind)) return 5;
            std::vector<ibv_wc> wc;
            pollAll(cq, int(perRound), wc);
            for (const ibv_wc& c : wc) {
                if (c.status != IBV_WC_SUCCESS || (c.wr_id % kRecvIds) / 5 != uint64_t(round)) return 6;
                bytes += long(kStreamSizes[c.wr_id % 5]);
            }
            completions += long(wc.size());
        }
    }
    std::printf("stream completions=%ld bytes=%ld\n", completions, bytes);
    ibv_destroy_qp(qp);
    ibv_destroy_cq(cq);
    closeLoop(v, l);
    return completions == perRound * kStreamRounds ? 0 : 6;
}

int streamEx(const Verbs& v) {
    static char buf[8192];
    Loop l = openLoop(v, buf, sizeof(buf));
    ibv_cq_ex* cq = createCqEx(l.ctx, IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM);
    if (!cq) return 7;
    ibv_qp_init_attr_ex a = exQpAttr(cq, l.pd, 1, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
    ibv_qp* qp = ibv_create_qp_ex(l.ctx, &a);
    ibv_qp_ex* qx = qp ? ibv_qp_to_qp_ex(qp) : nullptr;
    if (!qx) return 7;
    connect(v, qp, qp->qp_num);
    long completions = 0, bytes = 0;
    auto write = [&](uint64_t id, uint32_t len) {
        qx->wr_id = id;
        qx->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_rdma_write(qx, l.mr->rkey, uint64_t(buf + 4096));
        ibv_wr_set_sge(qx, l.mr->lkey, uint64_t(buf), len);
    };
    for (int round = 0; round < kStreamRounds; ++round) {
        ibv_wr_start(qx);
        for (int i = 0; i < 4; ++i) write(uint64_t(round * 5 + i), kStreamSizes[i]);
        if (ibv_wr_complete(qx)) return 5;
        if (round % 10 == 0) { // built, then abandoned: never posted
            ibv_wr_start(qx);
            for (int i = 0; i < 2; ++i) {
                qx->wr_id = 900000 + uint64_t(i);
                qx->wr_flags = IBV_SEND_SIGNALED;
                ibv_wr_send(qx);
                ibv_wr_set_sge(qx, l.mr->lkey, uint64_t(buf), 4000);
            }
            ibv_wr_abort(qx);
        }
        ibv_wr_start(qx);
        write(uint64_t(round * 5 + 4), kStreamSizes[4]);
        if (ibv_wr_complete(qx)) return 5;
        std::vector<std::pair<uint64_t, uint32_t>> done;
        pollAllEx(cq, 5, done);
        for (const auto& [id, len] : done) {
            if (id / 5 != uint64_t(round) || len != kStreamSizes[id % 5]) return 6;
            bytes += long(len);
        }
        completions += long(done.size());
    }
    std::printf("stream completions=%ld bytes=%ld\n", completions, bytes);
    ibv_destroy_qp(qp);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
    closeLoop(v, l);
    return completions == 5 * kStreamRounds ? 0 : 6;
}

[[noreturn]] int starve(const Verbs& v) {
    static char buf[8192];
    Loop l = openLoop(v, buf, sizeof(buf));
    ibv_cq* cq = v.createCq(l.ctx, 16, nullptr, nullptr, 0);
    ibv_qp* qp = createQp(v, l.pd, cq);
    connect(v, qp, qp->qp_num);
    ibv_wc wc[1];
    for (int i = 0; i < 1000; ++i) ibv_poll_cq(cq, 1, wc); // nothing posted yet: empty
    ibv_sge sg{uint64_t(buf), 2048, l.mr->lkey};
    ibv_send_wr w = sendWr(1, &sg, 1, IBV_WR_RDMA_WRITE, true);
    w.wr.rdma.remote_addr = uint64_t(buf + 4096);
    w.wr.rdma.rkey = l.mr->rkey;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qp, &w, &bad)) std::exit(5);
    while (ibv_poll_cq(cq, 1, wc) == 0) {
    }
    std::printf("starving\n");
    std::fflush(stdout);
    ibv_recv_wr r{};
    r.wr_id = 2;
    r.sg_list = &sg;
    r.num_sge = 1;
    ibv_recv_wr* badr = nullptr;
    if (ibv_post_recv(qp, &r, &badr)) std::exit(5);
    for (;;) ibv_poll_cq(cq, 1, wc); // no send matches the receive: never completes
}

} // namespace

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "basic";
    Verbs linked;
    linked.regMr = nullptr;
    if (std::strcmp(mode, "basic") == 0) return basic(linked);
    if (std::strcmp(mode, "threads") == 0) return threads(linked);
    if (std::strcmp(mode, "ex") == 0) return ex(linked);
    if (std::strcmp(mode, "stream") == 0) return stream(linked, Stream::Writes);
    if (std::strcmp(mode, "stream-split") == 0) return stream(linked, Stream::Split);
    if (std::strcmp(mode, "stream-sends") == 0) return stream(linked, Stream::Sends);
    if (std::strcmp(mode, "stream-ex") == 0) return streamEx(linked);
    if (std::strcmp(mode, "starve") == 0) starve(linked);
    if (std::strcmp(mode, "adopt") == 0) {
        Verbs hidden = dlvsymVerbs();
        ibv_device** list = hidden.getDeviceList(nullptr);
        ibv_context* ctx = hidden.open(list[0]); // unseen by hpcprof
        int rc = loopTwoSends(linked, ctx);
        linked.close(ctx);
        std::printf("foreign_ops_at_close=%d\n", stand_in_verbs_foreign_ops_at_close());
        return rc;
    }
    if (std::strcmp(mode, "bypass") == 0) {
        Verbs hidden = dlvsymVerbs();
        ibv_device** list = hidden.getDeviceList(nullptr);
        ibv_context* ctx = hidden.open(list[0]);
        int rc = loopTwoSends(hidden, ctx);
        hidden.close(ctx);
        return rc;
    }
    std::fprintf(stderr, "usage: rdma_sample basic|threads|adopt|bypass|ex\n");
    return 2;
}
