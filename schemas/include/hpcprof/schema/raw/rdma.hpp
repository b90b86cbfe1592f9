// SPDX-License-Identifier: MIT
// The RDMA family's record: verbs calls, work requests, completions, resources, aggregates.
#pragma once

#include "hpcprof/schema/raw/common.hpp"

namespace hpcprof::schema::raw {
// ---------------------------------------------------------------------------------------------
// RDMA section: verbs capture (agent/ibverbs), converted by families/rdma/rdma_records.cpp.
// ---------------------------------------------------------------------------------------------

/// What an RdmaRecord says. A data-path call writes one Call record, then one SendWr/RecvWr per
/// work request it posted or one Completion per work completion it returned (same thread file,
/// in that order, all with the call's start in `ts` except completions, which carry its end).
enum class RdmaAction : uint8_t {
    Device = 1,     ///< a context was taken over (u.device); device = its ordinal in the process
    Port = 2,       ///< attributes of one port of that device, read at take-over (u.port)
    Resource = 3,   ///< PD / MR / CQ / QP / SRQ created or destroyed (u.resource)
    QpState = 4,    ///< ibv_modify_qp (u.qpState); qpNum = the local QP
    Call = 5,       ///< one verbs call (u.call): data path, or a resource call with its duration
    SendWr = 6,     ///< one ibv_send_wr posted (u.wr)
    RecvWr = 7,     ///< one ibv_recv_wr posted to a QP or (qpNum = 0) an SRQ (u.wr)
    Completion = 8, ///< one ibv_wc returned by a poll (u.wc)
    DeviceClose = 9, ///< the context was closed and its table restored
    PostOne = 10,   ///< a post of exactly one WR that the provider accepted: the call and its
                    ///< WR in one record (u.postOne), the most common post, at half the volume
    PollOne = 11,   ///< an ibv_poll_cq that returned exactly one completion: the call and the
                    ///< completion in one record (u.pollOne); qpNum is the completion's
    Aggregate = 12, ///< work requests the agent folded beyond HPCPROF_RDMA_EVENT_RATE, and
                    ///< their completions (u.aggregate): one record per thread, QP and bucket,
                    ///< published when the bucket's first request folds and then updated in
                    ///< place (its fields are final once the thread moved on or the process
                    ///< ended); ts = its first post
};

/// Aggregate qpNum bit: its requests are receives posted to QP (qpNum & kRdmaQpNumMask).
constexpr uint32_t kRdmaAggregateReceives = 0x80000000u;
constexpr uint32_t kRdmaQpNumMask = 0x00ffffffu; ///< QP numbers are 24 bits

/// Latency bins of an Aggregate: bin k (k < kRdmaLatencyBins - 1) counts completions at most
/// 2^(kRdmaLatencyFirstBinLog2 + k) ns after their post, the last bin the longer ones.
constexpr int kRdmaLatencyBins = 12;
constexpr int kRdmaLatencyFirstBinLog2 = 10; // 1024 ns; the last bounded bin is 2^20 ns (1.05 ms)

/// Resource kinds of RdmaAction::Resource.
enum class RdmaResource : uint8_t { Pd = 1, Mr = 2, Cq = 3, Qp = 4, Srq = 5 };

constexpr uint8_t kRdmaAdopted = 0x01; ///< Device: opened unseen, taken over at a later call
constexpr uint8_t kRdmaSignaled = 0x01; ///< wr flags: IBV_SEND_SIGNALED (or the QP signals all)
/// wr flags: built through ibv_qp_ex (ibv_wr_send & co.), written as it was built, before its
/// call; it belongs to the IbvWrComplete Call of the same device, QP and ts that follows on the
/// thread, and was never posted when that call failed or was an IbvWrAbort.
constexpr uint8_t kRdmaBatched = 0x02;
/// resource.access of a QP / CQ: created through the extended API (ibv_create_qp_ex with send
/// ops, ibv_create_cq_ex) and its per-object entries wrapped; or not wrapped (table full).
constexpr uint32_t kRdmaExApi = 0x01;
constexpr uint32_t kRdmaExUntracked = 0x02;

struct RdmaRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    RdmaAction action;
    uint16_t device; ///< context ordinal in this process (0, 1, ...)
    uint32_t qpNum;  ///< local QP number, 0 = none
    uint64_t ts;     ///< raw ticks
    union {
        struct {
            uint64_t context;   ///< ibv_context address (pairs Device with DeviceClose)
            uint64_t guid;      ///< node GUID as read from ibv_device (0 = unknown)
            uint32_t nameId;    ///< string id of the device name ("mlx5_0")
            uint32_t eventRate; ///< HPCPROF_RDMA_EVENT_RATE in force (work requests/s per QP)
            uint8_t ports;      ///< ports whose attributes follow as Port records
            uint8_t flags;      ///< kRdmaAdopted
        } device;
        struct {
            uint64_t rateMbps; ///< active_width x active_speed, Mbit/s (0 = unknown)
            uint8_t gid[16];   ///< GID index 0 (RoCE, routed IB), zero if unknown
            uint16_t lid;
            uint8_t port;
            uint8_t state;     ///< enum ibv_port_state
            uint8_t width;     ///< active_width bits
            uint8_t speed;     ///< active_speed code
            uint8_t linkLayer; ///< IBV_LINK_LAYER_*
            uint8_t mtu;       ///< enum ibv_mtu
        } port;
        struct {
            uint64_t handle;  ///< object address (pairs create with destroy)
            uint64_t length;  ///< MR: bytes; CQ: cqe; QP/SRQ: max send/recv WRs
            uint64_t addr;    ///< MR: start address; QP: its CQ
            uint32_t access;  ///< MR: access flags
            uint32_t key;     ///< MR: rkey
            RdmaResource type;
            uint8_t created;  ///< 1 = created, 0 = destroyed
            uint8_t qpType;   ///< enum ibv_qp_type
            uint8_t sigAll;   ///< QP: sq_sig_all
        } resource;
        struct {
            uint8_t gid[16];   ///< ah_attr.grh.dgid when is_global
            uint32_t remoteQpn; ///< dest_qp_num (IBV_QP_DEST_QPN), 0 = not set
            uint32_t attrMask;
            int32_t rc;
            uint16_t dlid;
            uint8_t state;     ///< qp_state requested (IBV_QP_STATE), 255 = not set
            uint8_t port;
            uint8_t isGlobal;
        } qpState;
        struct {
            uint64_t end;     ///< raw ticks
            uint64_t bytes;   ///< sum of sg lists (posts) / of byte_len (polls)
            uint64_t object;  ///< CQ / SRQ / resource address
            uint32_t count;   ///< WRs posted / completions returned
            uint32_t folded;  ///< polls: unsuccessful calls folded into this record (0 = one call)
            uint16_t op;      ///< Op id from ops.def (RDMA range)
            int16_t rc;       ///< the call's return value (clamped), 0 = success
            uint32_t posted;  ///< posts: WRs accepted before *bad_wr
        } call;
        struct {
            uint64_t wrId;
            uint64_t bytes;      ///< sum of the sg list
            uint64_t remoteAddr; ///< RDMA read/write/atomic remote address, 0 = n/a
            uint32_t rkey;
            uint32_t numSge;
            uint8_t opcode;      ///< enum ibv_wr_opcode; 255 = receive
            uint8_t flags;       ///< kRdmaSignaled
            uint8_t qpType;
            uint8_t srq;         ///< 1 = posted to an SRQ (qpNum = 0), object in remoteAddr
        } wr;
        struct {
            uint8_t wr[36];  ///< the WR, laid out as u.wr (its first 36 bytes)
            uint16_t op;     ///< Op id of the post (ibv_post_send / _recv / _srq_recv)
            uint16_t reserved;
            uint64_t end;    ///< raw ticks: the call's end (ts is its start and the WR's post)
        } postOne;
        struct {
            uint64_t wrId;
            uint64_t cq;
            uint32_t byteLen;
            uint32_t srcQp;
            uint32_t wcFlags;
            uint32_t vendorErr;
            uint8_t status;  ///< enum ibv_wc_status
            uint8_t opcode;  ///< enum ibv_wc_opcode
        } wc;
        struct {
            uint8_t wc[36];  ///< the completion, laid out as u.wc (its first 36 bytes)
            uint16_t op;     ///< Op id of the poll
            uint16_t reserved;
            uint64_t end;    ///< raw ticks: the call's end, and the completion's time
        } pollOne;
        struct {
            uint64_t end;       ///< raw ticks: the latest post or completion counted
            uint64_t bytes;     ///< sum of the sg lists of the folded requests
            uint32_t posted;    ///< folded requests posted (each also counted by its call)
            uint32_t completed; ///< their successful completions the posting thread polled (a
                                ///< failed one is written in full; so are those another thread
                                ///< polls); each record takes at most 65534 requests
            uint16_t latency[kRdmaLatencyBins]; ///< completions by post-to-completion time
        } aggregate;
        uint8_t raw[48];
    } u;
};

static_assert(sizeof(RdmaRecord) == kRecordSize);
// PostOne's WR part is u.wr's: its fields end before byte 36, where postOne.op begins.
static_assert(offsetof(RdmaRecord, u.wr.srq) == 16 + 35 && offsetof(RdmaRecord, u.postOne.op) == 16 + 36);
static_assert(offsetof(RdmaRecord, u.wc.opcode) < 16 + 36 && offsetof(RdmaRecord, u.pollOne.op) == 16 + 36);
static_assert(std::is_trivially_copyable_v<RdmaRecord> && offsetof(RdmaRecord, kind) == 0);
static_assert(offsetof(RdmaRecord, u.call.end) == kSpanRepeat.endOffset &&
              offsetof(RdmaRecord, u.call.posted) == kSpanRepeat.counterOffset);
/// RdmaRecord PostOne / PollOne (end: u.postOne.end / u.pollOne.end; counter: the wr_id).
constexpr RepeatLayout kOneWrRepeat{56, 16, 8};

static_assert(offsetof(RdmaRecord, u.postOne.end) == kOneWrRepeat.endOffset &&
              offsetof(RdmaRecord, u.pollOne.end) == kOneWrRepeat.endOffset &&
              offsetof(RdmaRecord, u.wr.wrId) == kOneWrRepeat.counterOffset &&
              offsetof(RdmaRecord, u.wc.wrId) == kOneWrRepeat.counterOffset);

} // namespace hpcprof::schema::raw
