// SPDX-License-Identifier: MIT
#include "activity_translator.hpp"

#include <cstring>

#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::agent::cupti {

namespace raw = schema::raw;
using schema::Op;

// The struct each kind is read as: the newest in the CUDA 13 headers. Their sizes are checked so
// a toolkit that changes a layout fails the build instead of misreading records.
static_assert(sizeof(CUpti_ActivityKernel10) == 216);
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96);
static_assert(sizeof(CUpti_ActivityMemset4) == 88);
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56);
static_assert(sizeof(CUpti_ActivityGraphTrace2) == 56);
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24);

namespace {

/// What every activity that ran on a device stream says alike (kernels, copies, memsets, graphs).
template <typename Activity> void fillDeviceSpan(raw::GpuRecord* r, const Activity& a) {
    r->device = a.deviceId;
    r->stream = a.streamId;
    r->correlationId = a.correlationId;
    r->start = a.start;
    r->end = a.end;
    r->graphId = a.graphId;
}

/// A copy's size and memory kinds (host-device and peer copies).
template <typename Copy> void fillCopy(raw::GpuRecord* r, const Copy& m) {
    r->u.copy.bytes = int64_t(m.bytes);
    r->u.copy.copyKind = m.copyKind;
    r->u.copy.srcKind = m.srcKind;
    r->u.copy.dstKind = m.dstKind;
}

} // namespace

uint32_t ActivityTranslator::nameId(const char* name) {
    if (!name) return 0;
    auto it = m_names.find(name);
    if (it != m_names.end()) return it->second;
    uint32_t id = m_sink.intern(name, std::strlen(name));
    if (id) m_names.emplace(name, id);
    return id;
}

uint32_t ActivityTranslator::apiNameId(bool runtime, uint32_t cbid) {
    uint64_t key = (uint64_t(runtime) << 32) | cbid;
    auto it = m_apiNames.find(key);
    if (it != m_apiNames.end()) return it->second;
    const char* name = m_sink.apiName(runtime, cbid);
    uint32_t id = name ? m_sink.intern(name, std::strlen(name)) : 0;
    m_apiNames.emplace(key, id);
    return id;
}

raw::GpuRecord* ActivityTranslator::begin(raw::GpuActivity activity, Op op) {
    raw::GpuRecord* r = m_sink.reserve();
    if (!r) return nullptr;
    std::memset(static_cast<void*>(r), 0, sizeof(*r));
    r->activity = activity;
    r->op = uint16_t(op);
    ++m_translated;
    return r;
}

void ActivityTranslator::translateKernel(const CUpti_Activity* record) {
    const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    m_contextDevice[k.contextId] = k.deviceId;
    uint32_t name = nameId(k.name);
    raw::GpuRecord* r = begin(raw::GpuActivity::Kernel, Op::GpuKernel);
    if (!r) return;
    fillDeviceSpan(r, k);
    r->nameId = name;
    r->u.kernel.grid[0] = uint32_t(k.gridX);
    r->u.kernel.grid[1] = uint32_t(k.gridY);
    r->u.kernel.grid[2] = uint32_t(k.gridZ);
    r->u.kernel.block[0] = uint32_t(k.blockX);
    r->u.kernel.block[1] = uint32_t(k.blockY);
    r->u.kernel.block[2] = uint32_t(k.blockZ);
    m_sink.commit(r);
}

void ActivityTranslator::translateMemcpy(const CUpti_Activity* record) {
    const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
    m_contextDevice[m.contextId] = m.deviceId;
    raw::GpuRecord* r = begin(raw::GpuActivity::Memcpy, Op::GpuMemcpy);
    if (!r) return;
    fillDeviceSpan(r, m);
    fillCopy(r, m);
    // The runtime call (cudaMemcpyAsync) is what the program made; fall back to the driver's.
    r->correlationId = m.runtimeCorrelationId ? m.runtimeCorrelationId : m.correlationId;
    m_sink.commit(r);
}

void ActivityTranslator::translateMemcpyPeer(const CUpti_Activity* record) {
    const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
    raw::GpuRecord* r = begin(raw::GpuActivity::MemcpyPeer, Op::GpuMemcpyPeer);
    if (!r) return;
    fillDeviceSpan(r, m);
    fillCopy(r, m);
    r->u.copy.srcDevice = m.srcDeviceId;
    r->u.copy.dstDevice = m.dstDeviceId;
    m_sink.commit(r);
}

void ActivityTranslator::translateMemset(const CUpti_Activity* record) {
    const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
    m_contextDevice[m.contextId] = m.deviceId;
    raw::GpuRecord* r = begin(raw::GpuActivity::Memset, Op::GpuMemset);
    if (!r) return;
    fillDeviceSpan(r, m);
    r->u.copy.bytes = int64_t(m.bytes);
    r->u.copy.dstKind = uint8_t(m.memoryKind);
    m_sink.commit(r);
}

void ActivityTranslator::translateSync(const CUpti_Activity* record) {
    const auto& s = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
    raw::GpuRecord* r = begin(raw::GpuActivity::Sync, Op::GpuSync);
    if (!r) return;
    auto dev = m_contextDevice.find(s.contextId);
    r->device = dev != m_contextDevice.end() ? dev->second : 0;
    r->stream = s.streamId;
    r->correlationId = s.correlationId;
    r->start = s.start;
    r->end = s.end;
    r->u.sync.syncType = uint32_t(s.type);
    m_sink.commit(r);
}

void ActivityTranslator::translateGraphLaunch(const CUpti_Activity* record) {
    const auto& g = *reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
    raw::GpuRecord* r = begin(raw::GpuActivity::GraphLaunch, Op::GpuGraphLaunch);
    if (!r) return;
    fillDeviceSpan(r, g);
    m_sink.commit(r);
}

void ActivityTranslator::translateApi(const CUpti_Activity* record) {
    const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
    bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
    uint32_t name = apiNameId(runtime, a.cbid);
    raw::GpuRecord* r = begin(raw::GpuActivity::Api,
                              runtime ? Op::CudaRuntimeApi : Op::CudaDriverApi);
    if (!r) return;
    r->callerTid = a.threadId; // the calling thread (system tid: cuptiSetThreadIdType)
    r->correlationId = a.correlationId;
    r->start = a.start;
    r->end = a.end;
    r->nameId = name;
    r->u.api.result = int32_t(a.returnValue);
    r->u.api.cbid = a.cbid;
    m_sink.commit(r);
}

void ActivityTranslator::translateExternalCorrelation(const CUpti_Activity* record) {
    const auto& e = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
    raw::GpuRecord* r = begin(raw::GpuActivity::ExternalCorrelation, Op::GpuKernel);
    if (!r) return;
    r->correlationId = e.correlationId;
    r->u.ext.externalId = e.externalId;
    r->u.ext.externalKind = uint32_t(e.externalKind);
    m_sink.commit(r);
}

void ActivityTranslator::translateOverhead(const CUpti_Activity* record) {
    const auto& o = *reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
    raw::GpuRecord* r = begin(raw::GpuActivity::Overhead, Op::GpuKernel);
    if (!r) return;
    r->start = o.start;
    r->end = o.end;
    r->u.api.cbid = uint32_t(o.overheadKind);
    m_sink.commit(r);
}

void ActivityTranslator::translate(const CUpti_Activity* record) {
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: translateKernel(record); return;
    case CUPTI_ACTIVITY_KIND_MEMCPY: translateMemcpy(record); return;
    case CUPTI_ACTIVITY_KIND_MEMCPY2: translateMemcpyPeer(record); return;
    case CUPTI_ACTIVITY_KIND_MEMSET: translateMemset(record); return;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: translateSync(record); return;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: translateGraphLaunch(record); return;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: translateApi(record); return;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: translateExternalCorrelation(record); return;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: translateOverhead(record); return;
    default: ++m_ignored; return;
    }
}

void ActivityTranslator::dropped(uint64_t count) {
    if (count == 0) return;
    raw::GpuRecord* r = begin(raw::GpuActivity::Dropped, Op::GpuKernel);
    if (!r) return;
    r->u.dropped.count = count;
    m_sink.commit(r);
}

void ActivityTranslator::unavailable(const char* reason) {
    uint32_t id = reason ? m_sink.intern(reason, std::strlen(reason)) : 0;
    raw::GpuRecord* r = begin(raw::GpuActivity::Unavailable, Op::GpuKernel);
    if (!r) return;
    r->nameId = id;
    m_sink.commit(r);
}

} // namespace hpcprof::agent::cupti
