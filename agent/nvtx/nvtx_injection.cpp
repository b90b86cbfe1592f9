// SPDX-License-Identifier: MIT
// NVTX v3 injection: the NVTX headers compiled into every shared object of the program call
// InitializeInjectionNvtx2 once per object (found through NVTX_INJECTION64_PATH); we fill the
// CORE and CORE2 callback slots with handlers that append one NvtxRecord each.
//
// Handlers run on application threads, concurrently, possibly after exit began: no lock, no
// allocation, no syscall per event (string interning writes records only for names not yet in
// the thread's cache). Push/pop and start/end become separate records; the store pairs them.
#define NVTX_NO_IMPL
#include <nvToolsExt.h>

#include <unistd.h>

#include <cstdint>

#include "counters/boundary.hpp"
#include "nvtx_strings.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent::nvtx {

namespace raw = schema::raw;

namespace {

thread_local int t_depth = 0;       // push nesting, for the push/pop return values
thread_local uint32_t t_rangeCounter = 0;
thread_local int32_t t_tid = 0;

struct Message {
    uint32_t nameId = 0;
    uint32_t category = 0;
    uint8_t payloadType = 0;
    uint8_t flags = 0;
    uint32_t color = 0;
    uint64_t payload = 0;
};

Message fromAttributes(const nvtxEventAttributes_t* a) {
    Message m;
    if (!a) return m;
    m.category = a->category;
    if (a->colorType == NVTX_COLOR_ARGB) {
        m.flags |= raw::kNvtxHasColor;
        m.color = a->color;
    }
    if (a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 && a->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
        m.payloadType = uint8_t(a->payloadType);
        m.payload = a->payload.ullValue;
        // 32-bit payloads occupy the low half; clear the rest so the store sees one value.
        if (a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT32) m.payload &= 0xffffffffull;
    }
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: m.nameId = internCached(a->message.ascii); break;
    case NVTX_MESSAGE_TYPE_UNICODE: m.nameId = internCachedWide(a->message.unicode); break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        // Our registered-string handles are the string ids themselves (see registerStringA).
        m.nameId = uint32_t(reinterpret_cast<uintptr_t>(a->message.registered));
        break;
    default: break;
    }
    return m;
}

uint32_t domainId(nvtxDomainHandle_t d) { return uint32_t(reinterpret_cast<uintptr_t>(d)); }

void write(raw::NvtxAction action, uint64_t ts, uint32_t domain, const Message& m,
           uint64_t rangeId) {
    // CPU counters at the range's start and end (HPCPROF_COUNTER_BOUNDARIES=nvtx).
    if (action == raw::NvtxAction::Push || action == raw::NvtxAction::Start)
        counters::sampleBoundary(counters::kCounterBoundaryNvtx, counters::kCounterEnter);
    else if (action == raw::NvtxAction::Pop || action == raw::NvtxAction::End)
        counters::sampleBoundary(counters::kCounterBoundaryNvtx, counters::kCounterExit);
    auto* r = reinterpret_cast<raw::NvtxRecord*>(reserveEvent());
    if (!r) return;
    r->action = action;
    r->payloadType = m.payloadType;
    r->flags = m.flags;
    r->domainId = domain;
    r->ts = ts;
    r->rangeId = rangeId;
    r->nameId = m.nameId;
    r->category = m.category;
    r->payload = m.payload;
    r->color = m.color;
    r->reserved0 = 0;
    __atomic_store_n(&r->kind, raw::RecordKind::Nvtx, __ATOMIC_RELEASE);
}

bool on() { return recording(SourceBit::Nvtx); }

uint64_t nextRangeId() {
    if (t_tid == 0) t_tid = int32_t(gettid());
    return (uint64_t(uint32_t(t_tid)) << 32) | ++t_rangeCounter;
}

int push(uint32_t domain, const Message& m, uint64_t ts) {
    write(raw::NvtxAction::Push, ts, domain, m, 0);
    return t_depth++;
}

int pop(uint32_t domain) {
    uint64_t ts = now();
    write(raw::NvtxAction::Pop, ts, domain, Message{}, 0);
    if (t_depth == 0) return -1;
    return --t_depth;
}

// ---- CORE ------------------------------------------------------------------------------------

void markEx(const nvtxEventAttributes_t* a) {
    if (!on()) return;
    uint64_t ts = now();
    write(raw::NvtxAction::Mark, ts, 0, fromAttributes(a), 0);
}
void markA(const char* text) {
    if (!on()) return;
    uint64_t ts = now();
    Message m;
    m.nameId = internCached(text);
    write(raw::NvtxAction::Mark, ts, 0, m, 0);
}
void markW(const wchar_t* text) {
    if (!on()) return;
    uint64_t ts = now();
    Message m;
    m.nameId = internCachedWide(text);
    write(raw::NvtxAction::Mark, ts, 0, m, 0);
}
nvtxRangeId_t startWith(uint32_t domain, const Message& m, uint64_t ts) {
    uint64_t id = nextRangeId();
    write(raw::NvtxAction::Start, ts, domain, m, id);
    return id;
}
nvtxRangeId_t rangeStartEx(const nvtxEventAttributes_t* a) {
    if (!on()) return 0;
    uint64_t ts = now();
    return startWith(0, fromAttributes(a), ts);
}
nvtxRangeId_t rangeStartA(const char* text) {
    if (!on()) return 0;
    uint64_t ts = now();
    Message m;
    m.nameId = internCached(text);
    return startWith(0, m, ts);
}
nvtxRangeId_t rangeStartW(const wchar_t* text) {
    if (!on()) return 0;
    uint64_t ts = now();
    Message m;
    m.nameId = internCachedWide(text);
    return startWith(0, m, ts);
}
void rangeEnd(nvtxRangeId_t id) {
    if (!on()) return;
    write(raw::NvtxAction::End, now(), 0, Message{}, id);
}
int rangePushEx(const nvtxEventAttributes_t* a) {
    if (!on()) return NVTX_NO_PUSH_POP_TRACKING;
    uint64_t ts = now();
    return push(0, fromAttributes(a), ts);
}
int rangePushA(const char* text) {
    if (!on()) return NVTX_NO_PUSH_POP_TRACKING;
    uint64_t ts = now();
    Message m;
    m.nameId = internCached(text);
    return push(0, m, ts);
}
int rangePushW(const wchar_t* text) {
    if (!on()) return NVTX_NO_PUSH_POP_TRACKING;
    uint64_t ts = now();
    Message m;
    m.nameId = internCachedWide(text);
    return push(0, m, ts);
}
int rangePop() {
    if (!on()) return NVTX_NO_PUSH_POP_TRACKING;
    return pop(0);
}
void nameCategoryIn(uint32_t domain, uint32_t category, uint32_t nameId) {
    Message m;
    m.category = category;
    m.nameId = nameId;
    write(raw::NvtxAction::NameCategory, now(), domain, m, 0);
}
void nameCategoryA(uint32_t category, const char* name) {
    if (on()) nameCategoryIn(0, category, internCached(name));
}
void nameCategoryW(uint32_t category, const wchar_t* name) {
    if (on()) nameCategoryIn(0, category, internCachedWide(name));
}
void nameOsThreadA(uint32_t, const char*) {} // thread names come from the OS
void nameOsThreadW(uint32_t, const wchar_t*) {}

// ---- CORE2 (domains) -------------------------------------------------------------------------

void domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    if (!on()) return;
    uint64_t ts = now();
    write(raw::NvtxAction::Mark, ts, domainId(d), fromAttributes(a), 0);
}
nvtxRangeId_t domainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    if (!on()) return 0;
    uint64_t ts = now();
    return startWith(domainId(d), fromAttributes(a), ts);
}
void domainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
    if (!on()) return;
    write(raw::NvtxAction::End, now(), domainId(d), Message{}, id);
}
int domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    if (!on()) return NVTX_NO_PUSH_POP_TRACKING;
    uint64_t ts = now();
    return push(domainId(d), fromAttributes(a), ts);
}
int domainRangePop(nvtxDomainHandle_t d) {
    if (!on()) return NVTX_NO_PUSH_POP_TRACKING;
    return pop(domainId(d));
}
nvtxResourceHandle_t domainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
    return nullptr;
}
void domainResourceDestroy(nvtxResourceHandle_t) {}
void domainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
    if (on()) nameCategoryIn(domainId(d), category, internCached(name));
}
void domainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
    if (on()) nameCategoryIn(domainId(d), category, internCachedWide(name));
}
// Registered strings and domains are handed out as their string ids: no table to keep, and the
// store resolves them like any other name. A handle of 0 would mean "failed", so the id 0 (not
// recorded) yields a null handle and the program sees NVTX as unavailable for that name only.
nvtxStringHandle_t domainRegisterStringA(nvtxDomainHandle_t, const char* s) {
    return reinterpret_cast<nvtxStringHandle_t>(uintptr_t(on() ? internCached(s) : 0));
}
nvtxStringHandle_t domainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
    return reinterpret_cast<nvtxStringHandle_t>(uintptr_t(on() ? internCachedWide(s) : 0));
}
nvtxDomainHandle_t domainCreateA(const char* name) {
    return reinterpret_cast<nvtxDomainHandle_t>(uintptr_t(on() ? internCached(name) : 0));
}
nvtxDomainHandle_t domainCreateW(const wchar_t* name) {
    return reinterpret_cast<nvtxDomainHandle_t>(uintptr_t(on() ? internCachedWide(name) : 0));
}
void domainDestroy(nvtxDomainHandle_t) {}
void initialize(const void*) {}

template <typename Fn> void install(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
    if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool installCore(const NvtxExportTableCallbacks* cb) {
    NvtxFunctionTable t = nullptr;
    unsigned n = 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t) return false;
    install(t, n, NVTX_CBID_CORE_MarkEx, markEx);
    install(t, n, NVTX_CBID_CORE_MarkA, markA);
    install(t, n, NVTX_CBID_CORE_MarkW, markW);
    install(t, n, NVTX_CBID_CORE_RangeStartEx, rangeStartEx);
    install(t, n, NVTX_CBID_CORE_RangeStartA, rangeStartA);
    install(t, n, NVTX_CBID_CORE_RangeStartW, rangeStartW);
    install(t, n, NVTX_CBID_CORE_RangeEnd, rangeEnd);
    install(t, n, NVTX_CBID_CORE_RangePushEx, rangePushEx);
    install(t, n, NVTX_CBID_CORE_RangePushA, rangePushA);
    install(t, n, NVTX_CBID_CORE_RangePushW, rangePushW);
    install(t, n, NVTX_CBID_CORE_RangePop, rangePop);
    install(t, n, NVTX_CBID_CORE_NameCategoryA, nameCategoryA);
    install(t, n, NVTX_CBID_CORE_NameCategoryW, nameCategoryW);
    install(t, n, NVTX_CBID_CORE_NameOsThreadA, nameOsThreadA);
    install(t, n, NVTX_CBID_CORE_NameOsThreadW, nameOsThreadW);
    return true;
}

bool installCore2(const NvtxExportTableCallbacks* cb) {
    NvtxFunctionTable t = nullptr;
    unsigned n = 0;
    if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || !t) return false;
    install(t, n, NVTX_CBID_CORE2_DomainMarkEx, domainMarkEx);
    install(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, domainRangeStartEx);
    install(t, n, NVTX_CBID_CORE2_DomainRangeEnd, domainRangeEnd);
    install(t, n, NVTX_CBID_CORE2_DomainRangePushEx, domainRangePushEx);
    install(t, n, NVTX_CBID_CORE2_DomainRangePop, domainRangePop);
    install(t, n, NVTX_CBID_CORE2_DomainResourceCreate, domainResourceCreate);
    install(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, domainResourceDestroy);
    install(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, domainNameCategoryA);
    install(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, domainNameCategoryW);
    install(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, domainRegisterStringA);
    install(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, domainRegisterStringW);
    install(t, n, NVTX_CBID_CORE2_DomainCreateA, domainCreateA);
    install(t, n, NVTX_CBID_CORE2_DomainCreateW, domainCreateW);
    install(t, n, NVTX_CBID_CORE2_DomainDestroy, domainDestroy);
    install(t, n, NVTX_CBID_CORE2_Initialize, initialize);
    return true;
}

} // namespace

} // namespace hpcprof::agent::nvtx

/// NVTX's injection entry point, called once per shared object that uses NVTX (thread-safe: each
/// call fills a different object's table). Returns 0 (NVTX stays a no-op in that object) when
/// this process does not record NVTX.
extern "C" __attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
    using namespace hpcprof::agent;
    if (!getExportTable || !recording(SourceBit::Nvtx)) return 0;
    auto* cb = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
    if (!nvtx::installCore(cb)) return 0;
    nvtx::installCore2(cb); // optional: a very old NVTX has no domains
    auto* version =
        static_cast<const NvtxExportTableVersionInfo*>(getExportTable(NVTX_ETID_VERSIONINFO));
    if (version && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
        version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);
    return 1;
}
