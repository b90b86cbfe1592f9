// SPDX-License-Identifier: MIT
#include "host_waits.hpp"

#include "cupti_api.hpp"
#include "runtime/polling_state.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent::cupti {

namespace {

using schema::Op;
namespace raw = schema::raw;

struct Wait {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    Op op;
};

constexpr Wait kWaits[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, Op::CudaStreamSynchronize},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, Op::CudaStreamSynchronize},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, Op::CudaEventSynchronize},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, Op::CudaDeviceSynchronize},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020, Op::CudaDeviceSynchronize},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, Op::CuStreamSynchronize},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, Op::CuStreamSynchronize},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, Op::CuEventSynchronize},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, Op::CuCtxSynchronize},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, Op::CuCtxSynchronize},
};

// Busy polls: answered at once, "not ready" (cudaErrorNotReady, CUDA_ERROR_NOT_READY: 600) while
// the work is pending. Only their exit callbacks do anything.
constexpr Wait kPolls[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, Op::CudaStreamQuery},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000, Op::CudaStreamQuery},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, Op::CudaEventQuery},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, Op::CuStreamQuery},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz, Op::CuStreamQuery},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventQuery, Op::CuEventQuery},
};
constexpr int kNotReady = 600; // cudaErrorNotReady == CUDA_ERROR_NOT_READY

/// Inside a runtime query: the driver query it makes is not the program's poll.
thread_local bool t_inRuntimeQuery __attribute__((tls_model("initial-exec"))) = false;

template <size_t N>
const Wait* findIn(const Wait (&table)[N], CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    for (const Wait& w : table)
        if (w.domain == domain && w.cbid == cbid) return &w;
    return nullptr;
}

const Wait* findWait(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    return findIn(kWaits, domain, cbid);
}

/// The exit of a query: not ready shows the thread polling since the first such answer; any
/// other answer (done, or an error) ends it.
void onQueryExit(const Wait& w, const CUpti_CallbackData& info) {
    // Both result types are 32-bit enums, and 600 means "not ready" in each.
    int result = info.functionReturnValue ? *static_cast<const int*>(info.functionReturnValue) : 0;
    if (result == kNotReady) agent::pollUnsuccessful(w.op, agent::now());
    else agent::pollSucceeded();
}

} // namespace

void enableHostWaitCallbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber) {
    for (const Wait& w : kWaits) api.enableCallback(1, subscriber, w.domain, w.cbid);
    for (const Wait& w : kPolls) api.enableCallback(1, subscriber, w.domain, w.cbid);
}

bool onHostPoll(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info) {
    const Wait* w = findIn(kPolls, domain, cbid);
    if (!w) return false;
    bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (info.callbackSite == CUPTI_API_ENTER) {
        if (runtime) t_inRuntimeQuery = true;
        return true;
    }
    if (runtime) t_inRuntimeQuery = false;
    else if (t_inRuntimeQuery) return true;
    onQueryExit(*w, info);
    return true;
}

bool onHostWait(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& info) {
    const Wait* w = findWait(domain, cbid);
    if (!w) return false;
    if (!info.correlationData) return true;
    if (info.callbackSite == CUPTI_API_ENTER) {
        // The runtime's call enters the driver's: the outer one holds the line, the inner one
        // finds it taken and publishes nothing (its exit then clears nothing).
        raw::InFlightCall* line = agent::beginCall(agent::inFlightCall(w->op, agent::now()));
        *info.correlationData = uint64_t(reinterpret_cast<uintptr_t>(line));
    } else {
        agent::endCall(reinterpret_cast<raw::InFlightCall*>(uintptr_t(*info.correlationData)));
        *info.correlationData = 0;
    }
    return true;
}

} // namespace hpcprof::agent::cupti
