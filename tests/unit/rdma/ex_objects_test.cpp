// SPDX-License-Identifier: MIT
// Wrapping of the extended verbs objects, exercised through the real inline ibv_create_cq_ex /
// ibv_wr_* / ibv_start_poll of <infiniband/verbs.h> on a fake extended context and fake objects
// whose provider entries are plain functions (no libibverbs, nothing recorded: the wrappers must
// forward every call unchanged and give the provider's entries back).
#include <catch2/catch.hpp>

#include <infiniband/verbs.h>

#include <cerrno>

#include "ibverbs/context_table.hpp"
#include "ibverbs/ex_data_path.hpp"
#include "ibverbs/ex_objects.hpp"

using namespace hpcprof::agent::ibverbs;

namespace {

int g_starts = 0, g_sends = 0, g_sges = 0, g_completes = 0, g_polls = 0, g_ends = 0;
uint32_t g_lastLength = 0;

void fakeStart(ibv_qp_ex*) { ++g_starts; }
void fakeSend(ibv_qp_ex*) { ++g_sends; }
void fakeSetSge(ibv_qp_ex*, uint32_t, uint64_t, uint32_t length) {
    ++g_sges;
    g_lastLength = length;
}
int fakeComplete(ibv_qp_ex*) {
    ++g_completes;
    return 0;
}
int fakeStartPoll(ibv_cq_ex*, ibv_poll_cq_attr*) {
    ++g_polls;
    return ENOENT;
}
int fakeNextPoll(ibv_cq_ex*) { return ENOENT; }
void fakeEndPoll(ibv_cq_ex*) { ++g_ends; }

ibv_cq_ex g_createdCq{};
ibv_cq_ex* fakeCreateCqEx(ibv_context* ctx, ibv_cq_init_attr_ex*) {
    g_createdCq.context = ctx;
    return &g_createdCq;
}
ibv_qp* fakeCreateQpEx(ibv_context*, ibv_qp_init_attr_ex*) { return nullptr; }

struct FakeExContext {
    ibv_device device{};
    verbs_context v{};
    FakeExContext() {
        v.sz = sizeof(verbs_context);
        v.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
        v.context.device = &device;
        v.create_cq_ex = fakeCreateCqEx;
        v.create_qp_ex = fakeCreateQpEx;
    }
};

} // namespace

TEST_CASE("Taking an extended context over wraps its ex create entries, release restores them",
          "[rdma]") {
    FakeExContext f;
    REQUIRE(takeOver(&f.v.context, false));
    CHECK(f.v.create_cq_ex == &wrappedCreateCqEx);
    CHECK(f.v.create_qp_ex == &wrappedCreateQpEx);
    // The header's inline ibv_create_cq_ex reaches the provider through the wrapper.
    ibv_cq_init_attr_ex attr{};
    attr.cqe = 8;
    attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
    CHECK(ibv_create_cq_ex(&f.v.context, &attr) == &g_createdCq);
    CHECK(attr.wc_flags == IBV_WC_EX_WITH_BYTE_LEN); // the program's request is left as it was
    release(&f.v.context);
    CHECK(f.v.create_cq_ex == &fakeCreateCqEx);
    CHECK(f.v.create_qp_ex == &fakeCreateQpEx);
}

TEST_CASE("A plain context keeps no extended entries", "[rdma]") {
    ibv_device device{};
    ibv_context ctx{};
    ctx.device = &device;
    REQUIRE(takeOver(&ctx, false));
    CHECK(find(&ctx)->createQpEx == nullptr);
    CHECK(find(&ctx)->createCqEx == nullptr);
    release(&ctx);
}

TEST_CASE("An extended QP's work-request entries are wrapped, forward unchanged and come back",
          "[rdma]") {
    ibv_qp_ex qpx{};
    qpx.qp_base.qp_num = 42;
    qpx.wr_start = fakeStart;
    qpx.wr_send = fakeSend;
    qpx.wr_set_sge = fakeSetSge;
    qpx.wr_complete = fakeComplete;
    g_starts = g_sends = g_sges = g_completes = 0;
    REQUIRE(trackExQp(&qpx, 3));
    CHECK(qpx.wr_start == &exWrStart);
    CHECK(qpx.wr_send == &exWrSend);
    CHECK(qpx.wr_set_sge == &exWrSetSge);
    CHECK(qpx.wr_complete == &exWrComplete);
    CHECK(qpx.wr_rdma_write == nullptr); // not provided: left alone
    CHECK(qpx.wr_abort == nullptr);
    REQUIRE(findExQp(&qpx) != nullptr);
    CHECK(findExQp(&qpx)->qpNum == 42);
    CHECK(findExQp(&qpx)->device == 3);

    ibv_wr_start(&qpx);
    qpx.wr_id = 5;
    ibv_wr_send(&qpx);
    ibv_wr_set_sge(&qpx, 1, 0x1000, 777);
    CHECK(ibv_wr_complete(&qpx) == 0);
    CHECK(g_starts == 1);
    CHECK(g_sends == 1);
    CHECK(g_sges == 1);
    CHECK(g_lastLength == 777);
    CHECK(g_completes == 1);

    untrackExQp(&qpx.qp_base);
    CHECK(qpx.wr_start == &fakeStart);
    CHECK(qpx.wr_send == &fakeSend);
    CHECK(qpx.wr_set_sge == &fakeSetSge);
    CHECK(qpx.wr_complete == &fakeComplete);
    CHECK(qpx.wr_rdma_write == nullptr);
    CHECK(findExQp(&qpx) == nullptr);
    untrackExQp(&qpx.qp_base); // a second destroy path is harmless
    CHECK(qpx.wr_send == &fakeSend);
}

TEST_CASE("An extended CQ's poll entries are wrapped, forward unchanged and come back", "[rdma]") {
    ibv_cq_ex cq{};
    cq.start_poll = fakeStartPoll;
    cq.next_poll = fakeNextPoll;
    cq.end_poll = fakeEndPoll;
    g_polls = g_ends = 0;
    REQUIRE(trackExCq(&cq, 1));
    CHECK(cq.start_poll == &exStartPoll);
    CHECK(cq.next_poll == &exNextPoll);
    CHECK(cq.end_poll == &exEndPoll);
    ibv_poll_cq_attr attr{};
    CHECK(ibv_start_poll(&cq, &attr) == ENOENT);
    CHECK(ibv_next_poll(&cq) == ENOENT);
    ibv_end_poll(&cq);
    CHECK(g_polls == 1);
    CHECK(g_ends == 1);
    untrackExCq(ibv_cq_ex_to_cq(&cq));
    CHECK(cq.start_poll == &fakeStartPoll);
    CHECK(cq.next_poll == &fakeNextPoll);
    CHECK(cq.end_poll == &fakeEndPoll);
    CHECK(findExCq(&cq) == nullptr);
}

TEST_CASE("Many extended objects can be held at once, and their slots are reused after destroy",
          "[rdma]") {
    static ibv_cq_ex cqs[kMaxExCqs];
    for (auto& c : cqs) c.start_poll = fakeStartPoll;
    int held = 0;
    for (auto& c : cqs) held += trackExCq(&c, 0) ? 1 : 0;
    CHECK(held == kMaxExCqs);
    ibv_cq_ex extra{};
    CHECK_FALSE(trackExCq(&extra, 0)); // full: left untouched
    CHECK(extra.start_poll == nullptr);
    for (auto& c : cqs) CHECK(findExCq(&c) != nullptr);
    for (auto& c : cqs) untrackExCq(ibv_cq_ex_to_cq(&c));
    for (auto& c : cqs) CHECK(c.start_poll == &fakeStartPoll);
    CHECK(trackExCq(&extra, 0));
    untrackExCq(ibv_cq_ex_to_cq(&extra));
}
