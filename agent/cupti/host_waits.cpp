// SPDX-License-Identifier: MIT
#include "host_waits.hpp"

#include "cupti_api.hpp"
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

const Wait* findWait(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    for (const Wait& w : kWaits)
        if (w.domain == domain && w.cbid == cbid) return &w;
    return nullptr;
}

} // namespace

void enableHostWaitCallbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber) {
    for (const Wait& w : kWaits) api.enableCallback(1, subscriber, w.domain, w.cbid);
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
