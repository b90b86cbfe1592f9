// SPDX-License-Identifier: MIT
// The GPU family's records: NVTX ranges, NCCL calls and plugin events, CUPTI activity.
#pragma once

#include "hpcprof/schema/raw/common.hpp"

namespace hpcprof::schema::raw {
// ---------------------------------------------------------------------------------------------
// GPU section: NVTX, NCCL and CUPTI records (agent/nvtx, agent/nccl, agent/cupti).
// ---------------------------------------------------------------------------------------------

/// What an NvtxRecord says happened.
enum class NvtxAction : uint8_t {
    Push = 1,         ///< nvtxRangePush* / nvtxDomainRangePushEx (paired with the next Pop)
    Pop = 2,          ///< nvtxRangePop / nvtxDomainRangePop
    Start = 3,        ///< nvtxRangeStart* (paired with End by rangeId, may end on another thread)
    End = 4,          ///< nvtxRangeEnd
    Mark = 5,         ///< nvtxMark* (an instant)
    NameCategory = 6, ///< nvtxNameCategory*: category -> nameId for the domain
};

constexpr uint8_t kNvtxHasColor = 0x01;

struct NvtxRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    NvtxAction action;
    uint8_t payloadType; ///< NVTX payload type (1 u64, 2 i64, 3 double, 4 u32, 5 i32, 6 float), 0 = none
    uint8_t flags;       ///< kNvtxHasColor
    uint32_t domainId;   ///< string id of the domain name, 0 = the default domain
    uint64_t ts;         ///< raw ticks
    uint64_t rangeId;    ///< Start/End: process-unique range id
    uint32_t nameId;     ///< string id of the message (0 = none)
    uint32_t category;   ///< NVTX category (0 = none)
    uint64_t payload;    ///< payload bits as passed
    uint32_t color;      ///< ARGB when kNvtxHasColor
    int32_t reserved0;
    uint8_t reserved[16];
};

/// The 16 bytes of an NcclRecord after its times, named by what the record is.
union NcclPayload {
    /// API calls (hooks), plugin CollApi, P2pApi, Coll, P2p (count) and KernelLaunch (stream).
    struct {
        uint64_t count;  ///< element count
        uint64_t stream; ///< cudaStream_t value
    } call;
    /// Communicator creation (this rank in NcclRecord::peer); plugin kNcclCommInfo notes.
    struct {
        uint64_t nranks;
        uint64_t reserved;
    } init;
    /// Plugin GroupApi: the ncclGroupStart nesting depth.
    struct {
        uint64_t depth;
        uint64_t reserved;
    } group;
    /// Plugin ProxyOp: bytes the proxy moves (nSteps x chunkSize) on `channel` (isSend in the
    /// record's isSend).
    struct {
        uint64_t bytes;
        uint64_t channel;
    } proxyOp;
    /// Plugin KernelCh: the channel's GPU start timer.
    struct {
        uint64_t gpuStartTimer;
        uint64_t channel;
    } kernelCh;
    /// Plugin kNcclDropped: events the plugin's pool could not hold.
    struct {
        uint64_t events;
        uint64_t reserved;
    } dropped;
};
static_assert(sizeof(NcclPayload) == 16);

/// An NCCL API call or a profiler-plugin event (agent/nccl).
struct NcclRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    uint8_t result;     ///< ncclResult_t of the call (0 = success)
    uint16_t op;        ///< Op id from ops.def (NCCL range)
    uint8_t datatype;   ///< ncclDataType_t, 255 = n/a
    union {
        uint8_t redop;  ///< ncclRedOp_t (0 sum .. 4 avg, 5 = user-defined), 255 = n/a
        uint8_t isSend; ///< plugin ProxyOp: 1 = a send
    };
    uint8_t groupDepth; ///< ncclGroupStart nesting at the call (0 = not in a group)
    uint8_t flags;      ///< kNcclFromPlugin
    uint64_t start;     ///< raw ticks
    uint64_t end;       ///< raw ticks
    NcclPayload u;      ///< what the record is about (its op and flags say which member)
    uint64_t externalId; ///< CUPTI external correlation id pushed around the call, 0 = none
    uint32_t commKeyId; ///< string id of the communicator key ("nccl:<hash>"), 0 = none
    uint32_t seq;       ///< per-communicator collective instance, kNoSeq for other ops
    int32_t peer;       ///< root (rooted collectives), peer (p2p), rank (creation), -1 = none
    uint32_t group;     ///< per-thread group ordinal (0 = none); plugin: NCCL's function name id
};

constexpr uint32_t kNoSeq = 0xffffffffu;
constexpr uint8_t kNcclFromPlugin = 0x01;
constexpr uint8_t kNcclCommInfo = 0x02; ///< plugin init: u.init.nranks, peer = rank; not an event
constexpr uint8_t kNcclDropped = 0x04;  ///< plugin pool exhausted: u.dropped.events were not recorded

/// Which CUPTI activity a GpuRecord carries.
enum class GpuActivity : uint8_t {
    Kernel = 1,
    Memcpy = 2,
    MemcpyPeer = 3,
    Memset = 4,
    Sync = 5,
    GraphLaunch = 6,
    Api = 7,                 ///< runtime/driver API call; `stream` holds the calling tid
    ExternalCorrelation = 8, ///< correlationId -> u.ext.externalId
    Overhead = 9,            ///< CUPTI's own overhead (summed into stats)
    Dropped = 10,            ///< u.dropped.count records CUPTI dropped (buffer pool exhausted)
    Unavailable = 11,        ///< CUPTI could not start; nameId = reason
};

struct GpuRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    GpuActivity activity;
    uint16_t op;            ///< Op id from ops.def (GPU range)
    uint32_t device;        ///< device index
    union {
        uint32_t stream;    ///< CUPTI stream id
        uint32_t callerTid; ///< Api: the calling thread's tid (the store moves the call there)
    };
    uint32_t correlationId; ///< CUPTI correlation id, 0 = none
    uint64_t start;         ///< CLOCK_MONOTONIC ns
    uint64_t end;           ///< CLOCK_MONOTONIC ns
    uint32_t nameId;        ///< kernel / API function name string id
    uint32_t graphId;       ///< CUDA graph id, 0 = not from a graph
    union {
        struct {
            uint32_t grid[3];
            uint32_t block[3];
        } kernel;
        struct {
            int64_t bytes;
            uint8_t copyKind;   ///< CUpti_ActivityMemcpyKind
            uint8_t srcKind;    ///< CUpti_ActivityMemoryKind
            uint8_t dstKind;    ///< CUpti_ActivityMemoryKind
            uint8_t reserved;
            uint32_t srcDevice; ///< peer copies
            uint32_t dstDevice;
        } copy;
        struct {
            uint32_t syncType; ///< CUpti_ActivitySynchronizationType
        } sync;
        struct {
            int32_t result; ///< the call's return value
            uint32_t cbid;
        } api;
        struct {
            uint64_t externalId;
            uint32_t externalKind;
        } ext;
        struct {
            uint64_t count;
        } dropped;
        uint8_t raw[24];
    } u;
};

static_assert(sizeof(NvtxRecord) == kRecordSize);
static_assert(sizeof(NcclRecord) == kRecordSize);
static_assert(sizeof(GpuRecord) == kRecordSize);
static_assert(std::is_trivially_copyable_v<NvtxRecord> && std::is_trivially_copyable_v<NcclRecord> &&
              std::is_trivially_copyable_v<GpuRecord>);
static_assert(offsetof(NvtxRecord, kind) == 0 && offsetof(NcclRecord, kind) == 0 &&
              offsetof(GpuRecord, kind) == 0);

} // namespace hpcprof::schema::raw
