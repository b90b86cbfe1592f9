// SPDX-License-Identifier: MIT
// CUDA busy polls (cudaStreamQuery, cudaEventQuery and their driver forms) as the agent's CUPTI
// callbacks see them, with hand-filled callback data (no GPU here): a "not ready" answer shows
// the thread polling since its first such answer on its in-flight line, the next ones leave the
// line alone, any other answer clears it, and the driver query a runtime query makes is not
// counted apart. Each scenario runs in a forked child with its own recorder; the test reads the
// child's thread file.
#include <catch2/catch.hpp>

#include <string>

#include "cupti/host_waits.hpp"
#include "process_runner.hpp"
#include "recording_child.hpp"
#include "runtime/recorder.hpp"
#include "store/raw_reader.hpp"

using namespace hpcprof;
namespace raw = schema::raw;
using schema::Op;

namespace {

constexpr int kNotReady = 600; // cudaErrorNotReady, CUDA_ERROR_NOT_READY

/// One callback of a query, at its entry or its exit (with `result`).
void callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool enter, int result = 0) {
    CUpti_CallbackData info{};
    info.callbackSite = enter ? CUPTI_API_ENTER : CUPTI_API_EXIT;
    info.functionReturnValue = &result;
    REQUIRE(agent::cupti::onHostPoll(domain, cbid, info));
}

/// cudaStreamQuery as the runtime makes it: its entry, the driver's cuStreamQuery inside (entry
/// and exit, with the same answer), its exit.
void cudaStreamQuery(int result) {
    callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, true);
    callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, true);
    callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, false, result);
    callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, false, result);
}

void cuEventQuery(int result) {
    callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventQuery, true);
    callback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventQuery, false, result);
}

/// An event written between two polls, whose start tells when the second poll came.
void marker() {
    agent::EventFields f;
    f.op = Op::PosixWrite;
    f.start = f.end = agent::now();
    f.fd = 1;
    agent::recordEvent(f);
}

} // namespace

TEST_CASE("cudaStreamQuery answering not ready: polling since the first answer, the runtime's "
          "name (not its driver call's)", "[unit][gpu][cupti]") {
    test::TempDir dir;
    auto t = test::recordInChild(dir.path().string(), {}, [] {
        cudaStreamQuery(kNotReady);
        marker();
        for (int i = 0; i < 100; ++i) cudaStreamQuery(kNotReady);
    });
    REQUIRE(t.events.size() == 1);
    CHECK(t.inFlight.op == uint16_t(Op::CudaStreamQuery));
    CHECK((t.inFlight.flags & raw::kInFlightPolling) != 0);
    CHECK(t.inFlight.start > 0);
    CHECK(t.inFlight.start <= t.events[0].start); // published by the first poll, left by the rest
}

TEST_CASE("a query that answers success (or an error) ends the polling state",
          "[unit][gpu][cupti]") {
    test::TempDir dir;
    auto done = test::recordInChild(dir.path().string(), {}, [] {
        cuEventQuery(kNotReady);
        cuEventQuery(kNotReady);
        cuEventQuery(0); // cudaSuccess / CUDA_SUCCESS
    });
    CHECK(done.inFlight.op == 0);
    test::TempDir dir2;
    auto failed = test::recordInChild(dir2.path().string(), {}, [] {
        cudaStreamQuery(kNotReady);
        cudaStreamQuery(700); // cudaErrorIllegalAddress: the poll is over too
    });
    CHECK(failed.inFlight.op == 0);
}

TEST_CASE("a driver query of the program's own shows under the driver's name", "[unit][gpu][cupti]") {
    test::TempDir dir;
    auto t = test::recordInChild(dir.path().string(), {}, [] {
        marker(); // the thread's file exists before the poll
        cuEventQuery(kNotReady);
    });
    CHECK(t.inFlight.op == uint16_t(Op::CuEventQuery));
    CHECK((t.inFlight.flags & raw::kInFlightPolling) != 0);
    CHECK(t.inFlight.start >= t.events.at(0).start);
}

TEST_CASE("callbacks of other functions are not polls", "[unit][gpu][cupti]") {
    CUpti_CallbackData info{};
    info.callbackSite = CUPTI_API_EXIT;
    CHECK_FALSE(agent::cupti::onHostPoll(CUPTI_CB_DOMAIN_RUNTIME_API,
                                         CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, info));
    CHECK_FALSE(agent::cupti::onHostPoll(CUPTI_CB_DOMAIN_RUNTIME_API,
                                         CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, info));
}
