// SPDX-License-Identifier: MIT
// Take-over of a verbs context's function table, exercised through the real inline
// ibv_post_send / ibv_post_recv / ibv_poll_cq of <infiniband/verbs.h> on a fake context whose
// provider entries are plain functions (no libibverbs needed).
#include <catch2/catch.hpp>

#include <infiniband/verbs.h>

#include "ibverbs/context_table.hpp"
#include "ibverbs/data_path.hpp"

using namespace hpcprof::agent::ibverbs;

namespace {

int g_sends = 0, g_recvs = 0, g_polls = 0;
uint64_t g_lastWrId = 0;

int fakeSend(ibv_qp*, ibv_send_wr* wr, ibv_send_wr**) {
    for (; wr; wr = wr->next) ++g_sends, g_lastWrId = wr->wr_id;
    return 0;
}
int fakeRecv(ibv_qp*, ibv_recv_wr* wr, ibv_recv_wr**) {
    for (; wr; wr = wr->next) ++g_recvs;
    return 0;
}
int fakePoll(ibv_cq*, int, ibv_wc* wc) {
    ++g_polls;
    wc[0] = {};
    wc[0].wr_id = 77;
    return 1;
}

struct FakeDevice {
    ibv_device device{};
    ibv_context ctx{};
    ibv_qp qp{};
    ibv_cq cq{};
    FakeDevice() {
        ctx.device = &device;
        ctx.ops.post_send = fakeSend;
        ctx.ops.post_recv = fakeRecv;
        ctx.ops.poll_cq = fakePoll;
        qp.context = &ctx;
        qp.qp_num = 9;
        cq.context = &ctx;
    }
};

} // namespace

TEST_CASE("Taking a context over routes the inline verbs through the wrappers, release restores it",
          "[rdma]") {
    FakeDevice d;
    REQUIRE(takeOver(&d.ctx, false));
    CHECK(d.ctx.ops.post_send == &wrappedPostSend);
    CHECK(d.ctx.ops.post_recv == &wrappedPostRecv);
    CHECK(d.ctx.ops.poll_cq == &wrappedPollCq);
    CHECK(d.ctx.ops.post_srq_recv == nullptr); // not implemented by this provider: left alone
    CHECK(find(&d.ctx) != nullptr);

    ibv_sge sg{0, 100, 0};
    ibv_send_wr w[2] = {};
    w[0].wr_id = 5, w[0].sg_list = &sg, w[0].num_sge = 1, w[0].next = &w[1];
    w[1].wr_id = 6, w[1].sg_list = &sg, w[1].num_sge = 1;
    ibv_send_wr* bad = nullptr;
    g_sends = 0;
    CHECK(ibv_post_send(&d.qp, w, &bad) == 0); // the header's inline dispatch
    CHECK(g_sends == 2);
    CHECK(g_lastWrId == 6);
    ibv_recv_wr rw{};
    ibv_recv_wr* badr = nullptr;
    g_recvs = 0;
    CHECK(ibv_post_recv(&d.qp, &rw, &badr) == 0);
    CHECK(g_recvs == 1);
    ibv_wc wc[2];
    g_polls = 0;
    CHECK(ibv_poll_cq(&d.cq, 2, wc) == 1);
    CHECK(wc[0].wr_id == 77);
    CHECK(g_polls == 1);

    CHECK(takeOver(&d.ctx, false)); // idempotent: the saved entries stay the provider's
    release(&d.ctx);
    CHECK(d.ctx.ops.post_send == &fakeSend);
    CHECK(d.ctx.ops.post_recv == &fakeRecv);
    CHECK(d.ctx.ops.poll_cq == &fakePoll);
    CHECK(find(&d.ctx) == nullptr);
}

TEST_CASE("Many contexts opened and closed reuse the table's slots", "[rdma]") {
    for (int round = 0; round < 3 * kMaxContexts; ++round) {
        FakeDevice d;
        REQUIRE(takeOver(&d.ctx, false));
        REQUIRE(d.ctx.ops.post_send == &wrappedPostSend);
        release(&d.ctx);
        REQUIRE(d.ctx.ops.post_send == &fakeSend);
    }
    std::vector<FakeDevice> held(8);
    for (auto& d : held) REQUIRE(takeOver(&d.ctx, true));
    for (auto& d : held) CHECK(find(&d.ctx) != nullptr);
    for (auto& d : held) release(&d.ctx);
    for (auto& d : held) CHECK(d.ctx.ops.poll_cq == &fakePoll);
}
