// SPDX-License-Identifier: MIT
// CUDA injection entry point: the CUDA driver dlopens CUDA_INJECTION64_PATH (the agent, set by
// `hpcprof run`) at cuInit and calls InitializeInjection. We subscribe to CUPTI, put its
// timestamps on our clock, enable the activity kinds below and start the drain thread.
//
// Kinds: CONCURRENT_KERNEL (never KERNEL: it serialises kernels), MEMCPY, MEMCPY2 (peer), MEMSET,
// SYNCHRONIZATION, RUNTIME + DRIVER (HPCPROF_CUDA_API=all|runtime|none, default: both minus a
// few polling calls), EXTERNAL_CORRELATION, OVERHEAD, and GRAPH_TRACE (one record per graph
// launch) unless HPCPROF_CUDA_GRAPHS=nodes asks for every node's kernels and copies instead.
//
// Any failure (no CUPTI, too old, another profiler subscribed, the driver refuses) leaves the
// program running unprofiled on the GPU side: the reason is printed once and recorded.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cupti.h>

#include "activity_buffers.hpp"
#include "activity_translator.hpp"
#include "cupti_api.hpp"
#include "external_correlation.hpp"
#include "host_waits.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent::cupti {

namespace {

namespace raw = schema::raw;

const CuptiApi* g_api = nullptr;
int64_t g_skewNs = 0;

/// Appends GpuRecords to the calling (drain) thread's raw file.
class RecorderSink final : public RecordSink {
public:
    raw::GpuRecord* reserve() override {
        return reinterpret_cast<raw::GpuRecord*>(agent::reserveEvent());
    }
    void commit(raw::GpuRecord* r) override {
        __atomic_store_n(&r->kind, raw::RecordKind::Gpu, __ATOMIC_RELEASE);
    }
    uint32_t intern(const char* text, size_t len) override {
        return agent::internString(text, len);
    }
    const char* apiName(bool runtime, uint32_t cbid) override {
        const char* name = nullptr;
        if (!g_api) return nullptr;
        g_api->getCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                               cbid, &name);
        return name;
    }
};

RecorderSink g_sink;
ActivityTranslator g_translator(g_sink);
ActivityBuffers* g_buffers = nullptr;

// CUPTI requires nanoseconds here; CLOCK_MONOTONIC is the clock the calibration pairs of the
// process header are on, so the store places GPU records without any conversion.
uint64_t timestamp() { return uint64_t(monotonicNs() + g_skewNs); }

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    g_buffers->requested(buffer, size, maxNumRecords);
}
void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
    g_buffers->completed(buffer, validSize);
}

void pushExternal(uint64_t id) {
    g_api->pushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, id);
}
void popExternal() {
    uint64_t last = 0;
    g_api->popExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last);
}

// Host waits for the GPU and polls of it (host_waits.hpp), and flush points besides exit: a
// device reset discards the device's pending records, and cuProfilerStop marks the end of the
// interesting region.
void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    if (!info || onHostWait(domain, cbid, *info) || onHostPoll(domain, cbid, *info) ||
        info->callbackSite != CUPTI_API_ENTER)
        return;
    bool reset = domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                 cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020;
    bool stop = domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    if (reset || stop) g_api->flushAll(0);
}

void finishAtExit() {
    if (g_buffers) g_buffers->finish();
}

void unavailable(const char* why, int code) {
    char line[400];
    int n = code ? std::snprintf(line, sizeof(line), "%s (CUPTI error %d)", why, code)
                 : std::snprintf(line, sizeof(line), "%s", why);
    g_translator.unavailable(line);
    char msg[512];
    int m = std::snprintf(msg, sizeof(msg), "hpcprof: CUDA activity not recorded in process %d: %s\n",
                          int(getpid()), line);
    if (m > 0 && n > 0) {
        ssize_t ignored = ::write(2, msg, size_t(m) < sizeof(msg) ? size_t(m) : sizeof(msg) - 1);
        (void)ignored;
    }
}

const char* resultText(CUptiResult r) {
    const char* s = nullptr;
    if (g_api && g_api->getResultString) g_api->getResultString(r, &s);
    return s ? s : "CUPTI call failed";
}

void disableNoisyApis(const CuptiApi& api, const char* mode) {
    bool all = mode && std::strcmp(mode, "all") == 0;
    bool runtimeOnly = mode && std::strcmp(mode, "runtime") == 0;
    if (!runtimeOnly) api.enable(CUPTI_ACTIVITY_KIND_DRIVER);
    api.enable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (all) return;
    // Polled thousands of times per step by frameworks; they drown the timeline (Kineto's list).
    api.enableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0);
    api.enableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, 0);
    api.enableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020, 0);
    if (!runtimeOnly) {
        api.enableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 0);
        api.enableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, 0);
        api.enableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, 0);
    }
}

void start() {
    const char* why = nullptr;
    const CuptiApi* api = loadCuptiApi(&why);
    if (!api) return unavailable(why, 0);
    g_api = api;
    uint32_t version = 0;
    if (api->getVersion(&version) != CUPTI_SUCCESS || version < CUPTI_API_VERSION)
        return unavailable("libcupti is older than the CUPTI hpcprof was built with", int(version));
    CUpti_SubscriberHandle subscriber = nullptr;
    if (CUptiResult r = api->subscribe(&subscriber, onCallback, nullptr); r != CUPTI_SUCCESS)
        return unavailable(r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                               ? "another CUDA profiler (Nsight, a framework profiler, ...) "
                                 "already uses CUPTI in this process"
                               : resultText(r),
                           int(r));
    api->enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    api->enableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    enableHostWaitCallbacks(*api, subscriber);
    api->setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    g_skewNs = int64_t(numberSetting(Setting::ClockSkewNs));
    // Before any kind is enabled, or early records would be on CUPTI's default clock.
    if (CUptiResult r = api->registerTimestampCallback(timestamp); r != CUPTI_SUCCESS)
        return unavailable(resultText(r), int(r));
    static ActivityBuffers buffers(*api, g_translator);
    g_buffers = &buffers;
    if (CUptiResult r = api->registerCallbacks(bufferRequested, bufferCompleted);
        r != CUPTI_SUCCESS)
        return unavailable(resultText(r), int(r));
    if (CUptiResult r = api->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS)
        return unavailable(resultText(r), int(r));
    for (CUpti_ActivityKind k :
         {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
          CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
          CUPTI_ACTIVITY_KIND_OVERHEAD})
        api->enable(k);
    const char* graphs = textSetting(Setting::CudaGraphs);
    if (!graphs || std::strcmp(graphs, "nodes") != 0) api->enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    const char* apiMode = textSetting(Setting::CudaApi);
    if (!apiMode || std::strcmp(apiMode, "none") != 0) disableNoisyApis(*api, apiMode);
    api->flushPeriod(1000); // bounded loss if the process is killed
    detail::setExternalCorrelationFunctions(pushExternal, popExternal);
    buffers.startDrainThread();
    std::atexit(finishAtExit);
}

} // namespace

} // namespace hpcprof::agent::cupti

/// Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library. Always
/// returns 1: a failure to profile must never fail the program's CUDA initialisation.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    using namespace hpcprof::agent;
    static int s_started = 0;
    if (__atomic_exchange_n(&s_started, 1, __ATOMIC_ACQ_REL)) return 1;
    if (!recording(SourceBit::Cuda)) return 1;
    cupti::start();
    return 1;
}
