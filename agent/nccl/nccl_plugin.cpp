// SPDX-License-Identifier: MIT
// NCCL profiler plugin: exports ncclProfiler_v5 (NCCL 2.28 looks it up first) and
// ncclProfiler_v4 (NCCL 2.27, and 2.28's fallback), reached with NCCL_PROFILER_PLUGIN=<agent>.
// Records group/collective/p2p API events, the enqueued Coll/P2p operations (with NCCL's own
// sequence number), proxy operations and kernel channels, one NcclRecord per event at stop.
// Around KernelLaunch a CUPTI external correlation id is pushed so NCCL kernels join the call.
//
// Event handles come from a fixed pool (lock-free free list); when it is exhausted the event is
// not recorded (NCCL accepts a null handle) and the drop is recorded. startEvent/stopEvent run on
// NCCL's calling and proxy threads: thread-safe, no lock, no allocation (init allocates once per
// communicator).
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cupti/external_correlation.hpp"
#include "nccl_profiler_abi.hpp"
#include "runtime/recorder.hpp"

namespace {

namespace abi = hpcprof::agent::nccl::abi;
namespace raw = hpcprof::schema::raw;
namespace agent = hpcprof::agent;
using hpcprof::schema::Op;

constexpr uint32_t kPoolSize = 4096;
constexpr int kDefaultMask = abi::kGroupApi | abi::kCollApi | abi::kP2pApi | abi::kKernelLaunch |
                             abi::kColl | abi::kP2p | abi::kProxyOp | abi::kKernelCh;
static_assert(kDefaultMask == int(agent::settingSpec(agent::Setting::NcclPluginMask).fallback),
              "settings.def's fallback for HPCPROF_NCCL_PLUGIN_MASK must be the plugin's default");

struct Context {
    uint32_t commKeyId;
    int rank;
    int nranks;
};

struct Handle {
    uint64_t start;
    raw::NcclPayload payload;
    uint64_t externalId;
    const Context* ctx;
    uint32_t funcId;
    uint32_t seq;
    int32_t peer;
    uint32_t next; // free-list link (index + 1)
    uint16_t op;
    uint8_t datatype;
    uint8_t aux; // ProxyOp: isSend
};

Handle g_pool[kPoolSize];
uint32_t g_bump = 0;   // slots never handed out yet start here
uint64_t g_free = 0;   // (ABA tag << 32) | (index + 1) of the free-list head, 0 = empty

Handle* allocHandle() {
    uint64_t head = __atomic_load_n(&g_free, __ATOMIC_ACQUIRE);
    while (uint32_t idx = uint32_t(head)) {
        uint64_t next = (((head >> 32) + 1) << 32) | g_pool[idx - 1].next;
        if (__atomic_compare_exchange_n(&g_free, &head, next, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return &g_pool[idx - 1];
    }
    uint32_t i = __atomic_fetch_add(&g_bump, 1u, __ATOMIC_RELAXED);
    return i < kPoolSize ? &g_pool[i] : nullptr;
}

void freeHandle(Handle* h) {
    uint32_t idx = uint32_t(h - g_pool) + 1;
    uint64_t head = __atomic_load_n(&g_free, __ATOMIC_ACQUIRE);
    do {
        h->next = uint32_t(head);
    } while (!__atomic_compare_exchange_n(&g_free, &head, (((head >> 32) + 1) << 32) | idx, true,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

uint8_t datatypeIndex(const char* name) {
    static const char* const kNames[] = {"ncclInt8",    "ncclUint8",     "ncclInt32",
                                         "ncclUint32",  "ncclInt64",     "ncclUint64",
                                         "ncclFloat16", "ncclFloat32",   "ncclFloat64",
                                         "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
    if (!name) return 255;
    for (uint8_t i = 0; i < std::size(kNames); ++i)
        if (std::strcmp(name, kNames[i]) == 0) return i;
    return 255;
}

// NCCL passes its function names as static strings: cache their ids by address, per thread.
uint32_t funcId(const char* func) {
    if (!func) return 0;
    struct Entry {
        const char* ptr;
        uint32_t id;
    };
    thread_local Entry cache[32];
    Entry& e = cache[(reinterpret_cast<uintptr_t>(func) >> 3) % 32];
    if (e.ptr == func) return e.id;
    uint32_t id = agent::internString(func, std::strlen(func));
    if (id) e = {func, id};
    return id;
}

void writeRecord(uint16_t op, uint8_t flags, const Context* ctx, uint64_t start, uint64_t end,
                 const raw::NcclPayload& payload, uint32_t seq, int32_t peer, uint32_t func,
                 uint8_t datatype, uint8_t aux, uint64_t externalId) {
    auto* r = reinterpret_cast<raw::NcclRecord*>(agent::reserveEvent());
    if (!r) return;
    r->result = 0;
    r->op = op;
    r->datatype = datatype;
    r->redop = aux;
    r->groupDepth = 0;
    r->flags = uint8_t(raw::kNcclFromPlugin | flags);
    r->start = start;
    r->end = end;
    r->u = payload;
    r->externalId = externalId;
    r->commKeyId = ctx ? ctx->commKeyId : 0;
    r->seq = seq;
    r->peer = peer;
    r->group = func;
    __atomic_store_n(&r->kind, raw::RecordKind::Nccl, __ATOMIC_RELEASE);
}

ncclResult_t initCommon(void** context, uint64_t commId, int* mask, int nranks, int rank) {
    *context = nullptr;
    if (!agent::recording(agent::SourceBit::NcclPlugin)) {
        *mask = 0; // nothing wanted: NCCL skips every callback
        return ncclSuccess;
    }
    auto* ctx = static_cast<Context*>(std::malloc(sizeof(Context)));
    if (!ctx) return ncclSystemError;
    char key[12 + 16];
    std::memcpy(key, "nccl-plugin:", 12);
    for (int i = 0; i < 16; ++i) {
        unsigned v = unsigned(commId >> (60 - 4 * i)) & 0xf;
        key[12 + i] = char(v < 10 ? '0' + v : 'a' + v - 10);
    }
    ctx->commKeyId = agent::internString(key, sizeof(key));
    ctx->rank = rank;
    ctx->nranks = nranks;
    *mask = int(agent::numberSetting(agent::Setting::NcclPluginMask));
    uint64_t t = agent::now();
    raw::NcclPayload info{};
    info.init.nranks = uint64_t(nranks);
    writeRecord(uint16_t(Op::NcclPluginGroup), raw::kNcclCommInfo, ctx, t, t, info, raw::kNoSeq,
                rank, 0, 255, 255, 0);
    *context = ctx;
    return ncclSuccess;
}

/// Fields common to both descriptor versions, filled by the version adapters.
struct Start {
    uint16_t op = 0;
    raw::NcclPayload payload{}; ///< the member of the op (raw/gpu.hpp)
    uint32_t seq = raw::kNoSeq;
    int32_t peer = -1;
    const char* func = nullptr;
    const char* datatype = nullptr;
    uint8_t aux = 255;
    bool launch = false;
};

ncclResult_t startCommon(void* context, void** eHandle, const Start& s) {
    *eHandle = nullptr;
    if (!context || s.op == 0) return ncclSuccess;
    Handle* h = allocHandle();
    const auto* ctx = static_cast<const Context*>(context);
    if (!h) {
        uint64_t t = agent::now();
        raw::NcclPayload dropped{};
        dropped.dropped.events = 1;
        writeRecord(s.op, raw::kNcclDropped, ctx, t, t, dropped, raw::kNoSeq, -1, 0, 255, 255, 0);
        return ncclSuccess;
    }
    h->ctx = ctx;
    h->op = s.op;
    h->payload = s.payload;
    h->seq = s.seq;
    h->peer = s.peer;
    h->funcId = funcId(s.func);
    h->datatype = datatypeIndex(s.datatype);
    h->aux = s.aux;
    h->externalId = 0;
    if (s.launch) {
        h->externalId = agent::cupti::nextExternalId();
        agent::cupti::pushExternalId(h->externalId);
    }
    h->start = agent::now();
    *eHandle = h;
    return ncclSuccess;
}

ncclResult_t stopEvent(void* eHandle) {
    if (!eHandle) return ncclSuccess;
    auto* h = static_cast<Handle*>(eHandle);
    uint64_t end = agent::now();
    if (h->externalId) agent::cupti::popExternalId();
    writeRecord(h->op, 0, h->ctx, h->start, end, h->payload, h->seq, h->peer, h->funcId,
                h->datatype, h->aux, h->externalId);
    freeHandle(h);
    return ncclSuccess;
}

ncclResult_t recordEventState(void*, abi::EventState, abi::StateArgs*) { return ncclSuccess; }

ncclResult_t finalize(void* context) {
    std::free(context);
    return ncclSuccess;
}

Start fromV5(const abi::DescrV5& d) {
    Start s;
    switch (d.type) {
    case abi::kGroupApi:
        s.op = uint16_t(Op::NcclPluginGroupApi);
        s.payload.group.depth = uint64_t(d.groupApi.groupDepth);
        break;
    case abi::kCollApi:
        s.op = uint16_t(Op::NcclPluginCollApi);
        s.func = d.collApi.func;
        s.payload.call.count = d.collApi.count;
        s.datatype = d.collApi.datatype;
        s.peer = d.collApi.root;
        s.payload.call.stream = uint64_t(reinterpret_cast<uintptr_t>(d.collApi.stream));
        break;
    case abi::kP2pApi:
        s.op = uint16_t(Op::NcclPluginP2pApi);
        s.func = d.p2pApi.func;
        s.payload.call.count = d.p2pApi.count;
        s.datatype = d.p2pApi.datatype;
        s.payload.call.stream = uint64_t(reinterpret_cast<uintptr_t>(d.p2pApi.stream));
        break;
    case abi::kKernelLaunch:
        s.op = uint16_t(Op::NcclPluginKernelLaunch);
        s.payload.call.stream = uint64_t(reinterpret_cast<uintptr_t>(d.kernelLaunch.stream));
        s.launch = true;
        break;
    case abi::kGroup: s.op = uint16_t(Op::NcclPluginGroup); break;
    case abi::kColl:
        s.op = uint16_t(Op::NcclPluginColl);
        s.seq = uint32_t(d.coll.seqNumber);
        s.func = d.coll.func;
        s.payload.call.count = d.coll.count;
        s.peer = d.coll.root;
        s.datatype = d.coll.datatype;
        break;
    case abi::kP2p:
        s.op = uint16_t(Op::NcclPluginP2p);
        s.func = d.p2p.func;
        s.payload.call.count = d.p2p.count;
        s.datatype = d.p2p.datatype;
        s.peer = d.p2p.peer;
        break;
    case abi::kProxyOp:
        // PXN: the op may belong to another process; only its own fields are read (never
        // parentObj), so that is safe.
        s.op = uint16_t(Op::NcclPluginProxyOp);
        s.payload.proxyOp.bytes = uint64_t(d.proxyOp.nSteps) * uint64_t(d.proxyOp.chunkSize);
        s.payload.proxyOp.channel = d.proxyOp.channelId;
        s.peer = d.proxyOp.peer;
        s.aux = d.proxyOp.isSend ? 1 : 0;
        break;
    case abi::kKernelCh:
        s.op = uint16_t(Op::NcclPluginKernelCh);
        s.payload.kernelCh.channel = d.kernelCh.channelId;
        s.payload.kernelCh.gpuStartTimer = d.kernelCh.pTimer;
        break;
    default: break; // ProxyStep, ProxyCtrl, NetPlugin: not requested by the default mask
    }
    return s;
}

Start fromV4(const abi::DescrV4& d) {
    // v4 has the same non-API events with a narrower type and no parentGroup: re-pack as v5.
    abi::DescrV5 v5{};
    v5.type = d.type;
    switch (d.type) {
    case abi::kColl:
        v5.coll.seqNumber = d.coll.seqNumber;
        v5.coll.func = d.coll.func;
        v5.coll.count = d.coll.count;
        v5.coll.root = d.coll.root;
        v5.coll.datatype = d.coll.datatype;
        break;
    case abi::kP2p:
        v5.p2p.func = d.p2p.func;
        v5.p2p.count = d.p2p.count;
        v5.p2p.datatype = d.p2p.datatype;
        v5.p2p.peer = d.p2p.peer;
        break;
    case abi::kProxyOp: v5.proxyOp = d.proxyOp; break;
    case abi::kKernelCh: v5.kernelCh = d.kernelCh; break;
    case abi::kGroup: break;
    default: v5.type = 0; break;
    }
    return fromV5(v5);
}

ncclResult_t initV5(void** context, uint64_t commId, int* mask, const char*, int, int nranks,
                    int rank, abi::DebugLogger) {
    return initCommon(context, commId, mask, nranks, rank);
}
ncclResult_t startV5(void* context, void** eHandle, abi::DescrV5* d) {
    if (!d) return ncclSuccess;
    return startCommon(context, eHandle, fromV5(*d));
}
ncclResult_t initV4(void** context, int* mask, const char*, uint64_t commHash, int, int nranks,
                    int rank, abi::DebugLogger) {
    int m = 0;
    ncclResult_t r = initCommon(context, commHash, &m, nranks, rank);
    *mask = m & 0xff; // v4 knows only the first eight event types
    return r;
}
ncclResult_t startV4(void* context, void** eHandle, abi::DescrV4* d) {
    if (!d) return ncclSuccess;
    return startCommon(context, eHandle, fromV4(*d));
}

} // namespace

extern "C" {
__attribute__((visibility("default"))) abi::ProfilerV5 ncclProfiler_v5 = {
    "hpcprof", initV5, startV5, stopEvent, recordEventState, finalize};
__attribute__((visibility("default"))) abi::ProfilerV4 ncclProfiler_v4 = {
    "hpcprof", initV4, startV4, stopEvent, recordEventState, finalize};
}
