// SPDX-License-Identifier: MIT
// Added cost of the RDMA capture per verbs call: the header's inline ibv_post_send/ibv_poll_cq on
// a context whose provider entries do nothing (so only the dispatch is measured), first with the
// provider's table, then with the table taken over while recording into a raw directory.
//
//   rdma_bench [iterations]   prints ns per call for each case, unwrapped and wrapped, and the
//                             difference (best of 5 runs each)
#include <infiniband/verbs.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector/runtime/recorder.hpp"
#include "interpose/ibverbs/context_table.hpp"

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

struct Results {
    double post1, post4, recv1, pollEmpty, pollOne;
};

Results measure(ibv_qp* qp, ibv_cq* emptyCq, ibv_cq* oneCq, long n) {
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
    return out;
}

} // namespace

int main(int argc, char** argv) {
    long n = argc > 1 ? std::atol(argv[1]) : 200000;
    char dir[] = "/tmp/hpcprof-rdma-bench-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    setenv("HPCPROF_RAW_DIR", dir, 1);
    setenv("HPCPROF_THREAD_BUFFER_MB", "8192", 1);
    hpcprof::collector::ensureStarted();
    if (!hpcprof::collector::recording(hpcprof::collector::SourceBit::Rdma)) {
        std::fprintf(stderr, "rdma_bench: the recorder did not start\n");
        return 1;
    }

    ibv_device device{};
    ibv_context ctx{};
    ctx.device = &device;
    ctx.ops.post_send = nopSend;
    ctx.ops.post_recv = nopRecv;
    ibv_context ctxOne = ctx;
    ctx.ops.poll_cq = emptyPoll;
    ctxOne.ops.poll_cq = onePoll;
    ibv_qp qp{};
    qp.context = &ctx;
    qp.qp_num = 7;
    qp.qp_type = IBV_QPT_RC;
    ibv_cq emptyCq{}, oneCq{};
    emptyCq.context = &ctx;
    oneCq.context = &ctxOne;

    Results plain = measure(&qp, &emptyCq, &oneCq, n);
    hpcprof::interpose::ibverbs::takeOver(&ctx, false);
    hpcprof::interpose::ibverbs::takeOver(&ctxOne, false);
    Results wrapped = measure(&qp, &emptyCq, &oneCq, n);

    std::printf("%-34s %12s %12s %10s\n", "ns per call", "unwrapped", "wrapped", "added");
    auto row = [](const char* what, double a, double b) {
        std::printf("%-34s %12.1f %12.1f %10.1f\n", what, a, b, b - a);
    };
    row("ibv_post_send, 1 WR", plain.post1, wrapped.post1);
    row("ibv_post_send, 4 WRs (per WR)", plain.post4, wrapped.post4);
    row("ibv_post_recv, 1 WR", plain.recv1, wrapped.recv1);
    row("ibv_poll_cq, empty (folded)", plain.pollEmpty, wrapped.pollEmpty);
    row("ibv_poll_cq, 1 completion", plain.pollOne, wrapped.pollOne);
    hpcprof::interpose::ibverbs::release(&ctx);
    hpcprof::interpose::ibverbs::release(&ctxOne);
    std::string cmd = std::string("rm -rf ") + dir;
    return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
