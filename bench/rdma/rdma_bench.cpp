// SPDX-License-Identifier: MIT
// Added cost of the RDMA capture per verbs call: the header's inline ibv_post_send/ibv_poll_cq on
// a context whose provider entries do nothing (so only the dispatch is measured), first with the
// provider's table, then with the table taken over while recording into a raw directory. The
// extended APIs the same way: an ibv_qp_ex / ibv_cq_ex whose own entries do nothing, unwrapped,
// then wrapped (ex_objects.hpp).
//
// Two kinds of rows. "Posts and polls apart": posts that never complete and polls that return
// completions of nothing posted (a QP whose completions another thread polls, receive
// completions). "Busy QP": a provider that completes each signalled request at once into its
// CQ, posted and polled in a loop, the row per request, post and poll together. Every loop runs
// far beyond HPCPROF_RDMA_EVENT_RATE, as a busy NIC's queue does: the agent keeps the first
// requests of each 1 ms in full and folds the rest (wr_fold.hpp). Run it with
// HPCPROF_RDMA_EVENT_RATE=0 for the cost of writing every request and completion in full.
//
//   rdma_bench [iterations]   prints ns per call for each case, unwrapped and wrapped, and the
//                             difference (best of 5 runs each; the extended rows: the median
//                             of 7 runs, unwrapped and wrapped runs interleaved)
#include <infiniband/verbs.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ibverbs/context_table.hpp"
#include "ibverbs/ex_objects.hpp"
#include "runtime/recorder.hpp"

namespace {

int nopSend(ibv_qp*, ibv_send_wr*, ibv_send_wr**) { return 0; }
int nopRecv(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) { return 0; }
int emptyPoll(ibv_cq*, int, ibv_wc*) { return 0; }
int onePoll(ibv_cq*, int, ibv_wc* wc) {
    wc[0].wr_id = 1;
    wc[0].status = IBV_WC_SUCCESS;
    wc[0].byte_len = 64;
    return 1;
}

// A provider whose CQ gets each signalled request's completion as soon as it is posted.
struct Done {
    uint64_t wrId;
    uint32_t bytes;
};
constexpr uint32_t kLoopRing = 1024;
Done g_loop[kLoopRing];
uint32_t g_loopHead = 0, g_loopTail = 0;
void loopPush(uint64_t wrId, uint32_t bytes) { g_loop[g_loopTail++ % kLoopRing] = {wrId, bytes}; }

int loopSend(ibv_qp*, ibv_send_wr* wr, ibv_send_wr**) {
    for (; wr; wr = wr->next)
        if (wr->send_flags & IBV_SEND_SIGNALED) loopPush(wr->wr_id, wr->sg_list[0].length);
    return 0;
}
constexpr uint32_t kLoopQp = 9, kLoopExQp = 10;
int loopPoll(ibv_cq*, int n, ibv_wc* wc) {
    int got = 0;
    for (; got < n && g_loopHead != g_loopTail; ++got) {
        const Done& d = g_loop[g_loopHead++ % kLoopRing];
        wc[got] = {};
        wc[got].wr_id = d.wrId;
        wc[got].status = IBV_WC_SUCCESS;
        wc[got].opcode = IBV_WC_RDMA_WRITE;
        wc[got].byte_len = d.bytes;
        wc[got].qp_num = kLoopQp;
    }
    return got;
}

// The same for the extended APIs: a batch's requests complete when ibv_wr_complete posts them.
Done g_building[8];
uint32_t g_built = 0;
Done g_current;
void loopExStart(ibv_qp_ex*) { g_built = 0; }
void loopExWrite(ibv_qp_ex* qx, uint32_t, uint64_t) { g_building[g_built++ % 8] = {qx->wr_id, 0}; }
void loopExSge(ibv_qp_ex*, uint32_t, uint64_t, uint32_t length) { g_building[(g_built - 1) % 8].bytes = length; }
int loopExComplete(ibv_qp_ex*) {
    for (uint32_t i = 0; i < g_built; ++i) loopPush(g_building[i].wrId, g_building[i].bytes);
    return 0;
}
int loopExNext(ibv_cq_ex* cq) {
    if (g_loopHead == g_loopTail) return ENOENT;
    g_current = g_loop[g_loopHead++ % kLoopRing];
    cq->wr_id = g_current.wrId;
    cq->status = IBV_WC_SUCCESS;
    return 0;
}
int loopExStartPoll(ibv_cq_ex* cq, ibv_poll_cq_attr*) { return loopExNext(cq); }
uint32_t loopExBytes(ibv_cq_ex*) { return g_current.bytes; }
uint32_t loopExQpNum(ibv_cq_ex*) { return kLoopExQp; }

double nowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

template <typename F> double bestNsPerCall(long n, F&& f) {
    double best = 1e30;
    for (int run = 0; run < 5; ++run) {
        double t0 = nowNs();
        for (long i = 0; i < n; ++i) f(i);
        best = std::min(best, (nowNs() - t0) / double(n));
    }
    return best;
}

// Extended objects whose provider entries do nothing (an empty CQ, or one with a completion).
void nopQp(ibv_qp_ex*) {}
int nopComplete(ibv_qp_ex*) { return 0; }
void nopSge(ibv_qp_ex*, uint32_t, uint64_t, uint32_t) {}
int emptyStart(ibv_cq_ex*, ibv_poll_cq_attr*) { return ENOENT; }
int oneStart(ibv_cq_ex* cq, ibv_poll_cq_attr*) {
    cq->wr_id = 1;
    cq->status = IBV_WC_SUCCESS;
    return 0;
}
int noNext(ibv_cq_ex*) { return ENOENT; }
void nopEnd(ibv_cq_ex*) {}
ibv_wc_opcode readOpcode(ibv_cq_ex*) { return IBV_WC_RDMA_WRITE; }
uint32_t read64(ibv_cq_ex*) { return 64; }
uint32_t readQp(ibv_cq_ex*) { return 7; }
unsigned readFlags(ibv_cq_ex*) { return 0; }

double medianNsPerCall(std::vector<double>& runs) {
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

template <typename F> double onceNsPerCall(long n, F&& f) {
    double t0 = nowNs();
    for (long i = 0; i < n; ++i) f(i);
    return (nowNs() - t0) / double(n);
}

struct ExResults {
    double batch1, batch4, startEmpty, pollOne, busy1, busy4;
};

/// A batch of `k` signalled 64-byte RDMA writes on `qx`, ids from `id`.
void exBatch(ibv_qp_ex* qx, uint64_t id, int k) {
    ibv_wr_start(qx);
    for (int j = 0; j < k; ++j) {
        qx->wr_id = id + uint64_t(j);
        qx->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_rdma_write(qx, 1, 0x2000);
        ibv_wr_set_sge(qx, 1, 0x1000, 64);
    }
    ibv_wr_complete(qx);
}

/// Polls `cq` until it is empty, as a progress loop does.
void exDrain(ibv_cq_ex* cq) {
    ibv_poll_cq_attr attr{};
    if (ibv_start_poll(cq, &attr) != 0) return;
    while (ibv_next_poll(cq) == 0) {
    }
    ibv_end_poll(cq);
}

/// One run of each extended case on `qx` (a batch of 1 and of 4 RDMA writes of 64 bytes) and
/// the CQs.
ExResults measureExOnce(ibv_qp_ex* qx, ibv_cq_ex* emptyCq, ibv_cq_ex* oneCq, ibv_qp_ex* busyQx,
                        ibv_cq_ex* busyCq, long n) {
    ibv_poll_cq_attr attr{};
    ExResults r;
    r.batch1 = onceNsPerCall(n, [&](long i) { exBatch(qx, uint64_t(i), 1); });
    r.batch4 = onceNsPerCall(n / 4, [&](long i) { exBatch(qx, uint64_t(i * 4), 4); }) / 4;
    r.busy1 = onceNsPerCall(n, [&](long i) {
        exBatch(busyQx, uint64_t(i), 1);
        exDrain(busyCq);
    });
    r.busy4 = onceNsPerCall(n / 4, [&](long i) {
        exBatch(busyQx, uint64_t(i * 4), 4);
        exDrain(busyCq);
    }) / 4;
    r.startEmpty = onceNsPerCall(n, [&](long) { ibv_start_poll(emptyCq, &attr); });
    r.pollOne = onceNsPerCall(n, [&](long) {
        if (ibv_start_poll(oneCq, &attr) == 0) {
            while (ibv_next_poll(oneCq) == 0) {
            }
            ibv_end_poll(oneCq);
        }
    });
    return r;
}

struct Results {
    double post1, post4, recv1, pollEmpty, pollOne, busy1, busy4;
};

Results measure(ibv_qp* qp, ibv_cq* emptyCq, ibv_cq* oneCq, ibv_qp* busyQp, ibv_cq* busyCq, long n) {
    static ibv_sge sg = {0x1000, 64, 1};
    static ibv_send_wr w[4];
    for (int i = 0; i < 4; ++i) {
        w[i].sg_list = &sg;
        w[i].num_sge = 1;
        w[i].opcode = IBV_WR_RDMA_WRITE;
        w[i].send_flags = IBV_SEND_SIGNALED;
        w[i].next = i < 3 ? &w[i + 1] : nullptr;
    }
    static ibv_send_wr single = w[3];
    static ibv_recv_wr r = {};
    r.sg_list = &sg;
    r.num_sge = 1;
    ibv_send_wr* bad = nullptr;
    ibv_recv_wr* badr = nullptr;
    ibv_wc wc[4];
    Results out;
    out.post1 = bestNsPerCall(n, [&](long i) { single.wr_id = uint64_t(i); ibv_post_send(qp, &single, &bad); });
    out.post4 = bestNsPerCall(n / 4, [&](long i) { w[0].wr_id = uint64_t(i); ibv_post_send(qp, w, &bad); }) / 4;
    out.recv1 = bestNsPerCall(n, [&](long i) { r.wr_id = uint64_t(i); ibv_post_recv(qp, &r, &badr); });
    out.pollEmpty = bestNsPerCall(n, [&](long) { ibv_poll_cq(emptyCq, 4, wc); });
    out.pollOne = bestNsPerCall(n, [&](long) { ibv_poll_cq(oneCq, 4, wc); });
    // Busy QP: post, then poll until the CQ is empty (one ibv_poll_cq with every completion).
    out.busy1 = bestNsPerCall(n, [&](long i) {
        single.wr_id = uint64_t(i);
        ibv_post_send(busyQp, &single, &bad);
        ibv_poll_cq(busyCq, 4, wc);
    });
    out.busy4 = bestNsPerCall(n / 4, [&](long i) {
        for (int k = 0; k < 4; ++k) w[k].wr_id = uint64_t(i * 4 + k);
        ibv_post_send(busyQp, w, &bad);
        ibv_poll_cq(busyCq, 4, wc);
    }) / 4;
    return out;
}

// ---- The objects measured ----

/// Verbs objects whose provider entries do nothing (an empty CQ, a CQ with one completion) and a
/// busy QP with its CQ (loopSend, loopPoll). They point at each other: built in place, never
/// copied.
struct NopVerbs {
    ibv_device device{};
    ibv_context ctx{}, ctxOne{}, ctxLoop{};
    ibv_qp qp{}, busyQp{};
    ibv_cq emptyCq{}, oneCq{}, busyCq{};

    NopVerbs() {
        ctx.device = &device;
        ctx.ops.post_send = nopSend;
        ctx.ops.post_recv = nopRecv;
        ctxOne = ctx;
        ctx.ops.poll_cq = emptyPoll;
        ctxOne.ops.poll_cq = onePoll;
        qp.context = &ctx;
        qp.qp_num = 7;
        qp.qp_type = IBV_QPT_RC;
        emptyCq.context = &ctx;
        oneCq.context = &ctxOne;
        ctxLoop = ctx;
        ctxLoop.ops.post_send = loopSend;
        ctxLoop.ops.poll_cq = loopPoll;
        busyQp = qp;
        busyQp.context = &ctxLoop;
        busyQp.qp_num = kLoopQp;
        busyCq.context = &ctxLoop;
    }
    NopVerbs(const NopVerbs&) = delete;
    NopVerbs& operator=(const NopVerbs&) = delete;

    Results measure(long n) { return ::measure(&qp, &emptyCq, &oneCq, &busyQp, &busyCq, n); }
};

/// The extended APIs' objects the same way, on `ctx`.
struct NopExVerbs {
    ibv_qp_ex qx{}, busyQx{};
    ibv_cq_ex emptyEx{}, oneEx{}, busyEx{};

    explicit NopExVerbs(ibv_context* ctx) {
        qx.qp_base.context = ctx;
        qx.qp_base.qp_num = 8;
        qx.qp_base.qp_type = IBV_QPT_RC;
        qx.wr_start = nopQp;
        qx.wr_abort = nopQp;
        qx.wr_complete = nopComplete;
        qx.wr_rdma_write = [](ibv_qp_ex*, uint32_t, uint64_t) {};
        qx.wr_set_sge = nopSge;
        for (ibv_cq_ex* c : {&emptyEx, &oneEx}) {
            c->context = ctx;
            c->next_poll = noNext;
            c->end_poll = nopEnd;
            c->read_opcode = readOpcode;
            c->read_byte_len = read64;
            c->read_qp_num = readQp;
            c->read_wc_flags = readFlags;
        }
        emptyEx.start_poll = emptyStart;
        oneEx.start_poll = oneStart;
        busyQx = qx;
        busyQx.qp_base.qp_num = kLoopExQp;
        busyQx.wr_start = loopExStart;
        busyQx.wr_complete = loopExComplete;
        busyQx.wr_rdma_write = loopExWrite;
        busyQx.wr_set_sge = loopExSge;
        busyEx = oneEx;
        busyEx.start_poll = loopExStartPoll;
        busyEx.next_poll = loopExNext;
        busyEx.read_byte_len = loopExBytes;
        busyEx.read_qp_num = loopExQpNum;
    }
    NopExVerbs(const NopExVerbs&) = delete;
    NopExVerbs& operator=(const NopExVerbs&) = delete;

    void track() {
        using namespace hpcprof::agent::ibverbs;
        trackExQp(&qx, 0);
        trackExQp(&busyQx, 0);
        trackExCq(&emptyEx, 0);
        trackExCq(&oneEx, 0);
        trackExCq(&busyEx, 0);
    }
    void untrack() {
        using namespace hpcprof::agent::ibverbs;
        untrackExQp(&qx.qp_base);
        untrackExQp(&busyQx.qp_base);
        untrackExCq(ibv_cq_ex_to_cq(&emptyEx));
        untrackExCq(ibv_cq_ex_to_cq(&oneEx));
        untrackExCq(ibv_cq_ex_to_cq(&busyEx));
    }
    ExResults measureOnce(long n) { return measureExOnce(&qx, &emptyEx, &oneEx, &busyQx, &busyEx, n); }
};

// ---- The table ----

constexpr int kExRows = 6;

void printRow(const char* what, double a, double b) {
    std::printf("%-58s %12.1f %12.1f %10.1f\n", what, a, b, b - a);
}

void printBasicRows(double clocks, const Results& plain, const Results& wrapped) {
    std::printf("%-58s %12.1f\n", "two clock reads (the floor of any timed call)", clocks);
    std::printf("%-58s %12s %12s %10s\n", "ns per call", "unwrapped", "wrapped", "added");
    std::printf("Posts and polls apart:\n");
    printRow("ibv_post_send, 1 WR", plain.post1, wrapped.post1);
    printRow("ibv_post_send, 4 WRs (per WR)", plain.post4, wrapped.post4);
    printRow("ibv_post_recv, 1 WR", plain.recv1, wrapped.recv1);
    printRow("ibv_poll_cq, empty (folded)", plain.pollEmpty, wrapped.pollEmpty);
    printRow("ibv_poll_cq, 1 completion", plain.pollOne, wrapped.pollOne);
    std::printf("Busy QP, per request, its post and its poll together:\n");
    printRow("ibv_post_send 1 WR + ibv_poll_cq", plain.busy1, wrapped.busy1);
    printRow("ibv_post_send 4 WRs + ibv_poll_cq (per WR)", plain.busy4, wrapped.busy4);
}

/// Extended APIs: the same nop objects wrapped and unwrapped, alternately, 7 runs each.
/// runs[wrapped][row]: ns per call of each run.
void measureExtended(NopExVerbs& ex, long n, std::vector<double> (&runs)[2][kExRows]) {
    for (int run = 0; run < 7; ++run)
        for (int wrappedRun = 0; wrappedRun < 2; ++wrappedRun) {
            if (wrappedRun) ex.track();
            ExResults r = ex.measureOnce(n);
            if (wrappedRun) ex.untrack();
            double v[kExRows] = {r.batch1, r.batch4, r.startEmpty, r.pollOne, r.busy1, r.busy4};
            for (int k = 0; k < kExRows; ++k) runs[wrappedRun][k].push_back(v[k]);
        }
}

void printExtendedRows(std::vector<double> (&runs)[2][kExRows]) {
    const char* exNames[kExRows] = {"ibv_wr_* batch of 1 (start, rdma_write, set_sge, complete)",
                                    "ibv_wr_* batch of 4 (per WR)", "ibv_start_poll, empty (folded)",
                                    "ibv_start_poll..end_poll, 1 completion",
                                    "ibv_wr_* batch of 1 + its poll",
                                    "ibv_wr_* batch of 4 + their poll (per WR)"};
    std::printf("Extended APIs, posts and polls apart:\n");
    for (int k = 0; k < kExRows; ++k) {
        if (k == 4) std::printf("Extended APIs, busy QP, per request:\n");
        printRow(exNames[k], medianNsPerCall(runs[0][k]), medianNsPerCall(runs[1][k]));
    }
}

} // namespace

int main(int argc, char** argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 200000;
    char dir[] = "/tmp/hpcprof-rdma-bench-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    setenv("HPCPROF_RAW_DIR", dir, 1);
    setenv("HPCPROF_THREAD_BUFFER_MB", "8192", 1);
    hpcprof::agent::ensureStarted();
    if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Rdma)) {
        std::fprintf(stderr, "rdma_bench: the recorder did not start\n");
        return 1;
    }

    NopVerbs verbs;
    Results plain = verbs.measure(n);
    hpcprof::agent::ibverbs::takeOver(&verbs.ctx, false);
    hpcprof::agent::ibverbs::takeOver(&verbs.ctxOne, false);
    hpcprof::agent::ibverbs::takeOver(&verbs.ctxLoop, false);
    Results wrapped = verbs.measure(n);

    // What any timed call costs at least: its start and end ticks.
    volatile uint64_t sink = 0;
    double clocks = bestNsPerCall(n, [&](long) { sink = sink + hpcprof::agent::now() + hpcprof::agent::now(); });
    printBasicRows(clocks, plain, wrapped);

    NopExVerbs ex(&verbs.ctx);
    std::vector<double> runs[2][kExRows];
    measureExtended(ex, n, runs);
    printExtendedRows(runs);
    hpcprof::agent::ibverbs::release(&verbs.ctx);
    hpcprof::agent::ibverbs::release(&verbs.ctxOne);
    hpcprof::agent::ibverbs::release(&verbs.ctxLoop);
    std::string cmd = std::string("rm -rf ") + dir;
    return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
