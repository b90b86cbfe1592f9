// SPDX-License-Identifier: MIT
// The raw capture ABI: what the in-process agent writes and the store step reads.
//
// A run's raw directory holds one folder per process:
//
//   RAWDIR/
//     proc-<pid>-<start_ns>/
//       process.bin        one ProcessHeader (4 KiB), memory-mapped, updated in place
//       thread-<tid>       ThreadFileHeader (4 KiB) + fixed-size 64-byte records, grown in chunks
//       thread-<tid>-<k>   the same, for a later thread the kernel gave the same id
//       thread-spare-<n>   the same, made ahead by the agent for a starting thread (its header
//                          names the thread; all zero: no thread took it, nothing to read)
//
// Thread file layout:
//
//   0        4096                 4096 + 64*k
//   +--------+--------+--------+-- ... --+--------+----------------- (zero-filled tail)
//   | header | rec 0  | rec 1  |         | rec k-1| unused slots
//   +--------+--------+--------+-- ... --+--------+-----------------
//
// Both files are MAP_SHARED mappings, so every completed record reaches the page cache the moment
// it is written and survives SIGKILL or a crash of the process. No page is mapped before its
// disk blocks exist; a thread whose file cannot grow (full disk, quota, buffer limit) stops
// recording and says when and why in its header (format 4). A record is "committed" when its
// first byte (kind) is non-zero: writers fill the body first and store the kind last with release
// ordering. header.reserved counts slots handed out; a reserved slot whose kind is still Empty was
// interrupted (killed mid-record) and is counted as torn by the store.
//
// GPU section (NvtxRecord, NcclRecord, GpuRecord at the end of this file): the same 64-byte slots
// with their own kinds; plain copyable structs whose kind byte is published with
// __atomic_store_n(..., __ATOMIC_RELEASE). NVTX and NCCL records are written by the application
// thread that made the call (timestamps in raw ticks). GpuRecords are written by the CUPTI drain thread into its
// own thread file; their timestamps are CLOCK_MONOTONIC ns (CUPTI's timestamp callback must
// return ns), and CUDA API records name the calling thread in `stream` so the store can move them
// onto that thread's track. NVTX push/pop and start/end are separate records that the store pairs
// (per thread and domain / by range id), so a range open when the process dies is still seen.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace hpcprof::schema::raw {

constexpr uint64_t kProcessMagic = 0x31435250'46504348ull; // "HCPFPRC1" little endian
constexpr uint64_t kThreadMagic = 0x31444854'46504348ull;  // "HCPFTHD1"
/// 2: RepeatRecord; 3: its period; 4: why and when a thread stopped recording (ThreadFileHeader
/// stop fields and drop counts by DropReason, ProcessHeader drops of threads without a file).
constexpr uint32_t kFormatVersion = 4;
constexpr uint32_t kOldestReadableVersion = 1; ///< what this reader still reads (1: no repeats)
constexpr uint32_t kRecordSize = 64;
constexpr uint32_t kHeaderSize = 4096;

/// Record discriminator; the first byte of every record. Empty = never committed.
enum class RecordKind : uint8_t {
    Empty = 0,
    Event = 1,  ///< an intercepted call or an instant (EventRecord)
    String = 2, ///< a piece of an interned string (StringRecord)
    MpiCompletion = 3, ///< one request an MPI wait/test completed (MpiCompletionRecord)
    Repeat = 4, ///< more calls like the record in the slot before it (RepeatRecord)
    Nvtx = 10,  ///< an NVTX push/pop/start/end/mark (NvtxRecord, see the GPU section below)
    Nccl = 11,  ///< an NCCL API call or profiler-plugin event (NcclRecord)
    Gpu = 12,   ///< a CUPTI activity record translated by the drain thread (GpuRecord)
    Counter = 20,    ///< one sample of up to 6 counters of one thread (CounterRecord)
    CounterDef = 21, ///< what counter slot k is, or why a counter is unavailable (CounterDefRecord)
    Rdma = 13,  ///< a verbs call, work request, completion or resource change (RdmaRecord)
};

/// Which clock the raw ticks come from.
enum class ClockKind : uint32_t {
    Monotonic = 0, ///< ticks are CLOCK_MONOTONIC nanoseconds
    Tsc = 1,       ///< ticks are invariant TSC cycles; convert with the calibration pairs
};

/// How a process ended, as far as the agent could tell.
enum class EndState : uint32_t {
    Running = 0, ///< never reached an exit path: killed, crashed, or still running
    Exited = 1,  ///< exit() / return from main (atexit ran)
    QuickExit = 2, ///< _exit() / _Exit()
    Exec = 3,    ///< replaced its image with exec*(); the new image is a separate process folder
    Aborted = 4, ///< called MPI_Abort (the job is being torn down)
};

/// Why the agent could not record a record. A thread that meets one of the stopping reasons
/// (buffer limit, disk full, quota, file error) records nothing more: its file ends there and
/// its header says when (ThreadFileHeader::stoppedTicks).
enum class DropReason : uint32_t {
    None = 0,
    BufferLimit = 1, ///< the thread's file reached HPCPROF_THREAD_BUFFER_MB (stops the thread)
    DiskFull = 2,    ///< ENOSPC growing or creating the file (stops the thread)
    Quota = 3,       ///< EDQUOT: the user's disk quota is exhausted (stops the thread)
    FileError = 4,   ///< another error creating, growing or mapping the file (stops the thread)
    SignalWhileGrowing = 5, ///< a signal handler recorded while its thread grew the file (one
                            ///< record; the thread goes on)
    AfterThreadExit = 6,    ///< recorded by another library's thread-exit handler after the
                            ///< thread's file was closed
};
constexpr uint32_t kDropReasonCount = 7;

/// True for the reasons after which a thread records nothing more.
constexpr bool stopsThread(DropReason r) {
    return r == DropReason::BufferLimit || r == DropReason::DiskFull || r == DropReason::Quota ||
           r == DropReason::FileError;
}

/// One clock-offset measurement against rank 0 (MPI ping-pong, minimum round trip).
struct ClockSync {
    int64_t localNs;  ///< this process's monotonic ns at the measurement
    int64_t offsetNs; ///< this process's clock minus rank 0's clock
    int64_t rttNs;    ///< round trip of the exchange kept (uncertainty = rtt / 2)
    uint32_t valid;   ///< 1 once written
    uint32_t padding;
};
static_assert(sizeof(ClockSync) == 32);

/// One point where the raw clock and the system clocks were read together.
struct ClockPair {
    uint64_t ticks;
    int64_t monotonicNs;
    int64_t realtimeNs;
};
static_assert(sizeof(ClockPair) == 24);

/// The per-process header, written at agent start and updated in place (rank after MPI_Init,
/// calibration pairs, end state). Stays exactly one page.
struct ProcessHeader {
    uint64_t magic;
    uint32_t version;
    uint32_t recordSize;
    int32_t pid;
    int32_t ppid;
    int32_t rank;       ///< world rank, -1 = not a rank process
    int32_t worldSize;  ///< -1 = unknown
    int32_t localRank;  ///< -1 = unknown
    ClockKind clockKind;
    ClockPair start;
    ClockPair last;          ///< refreshed at chunk hand-off and at exit (guarded by lastSeq)
    uint64_t lastSeq;        ///< seqlock for `last`: odd while being written
    uint64_t tscHz;          ///< nominal TSC frequency measured by the launcher (0 = unknown)
    uint64_t nextStringId;   ///< atomic counter for interned string ids (0 is "none")
    uint64_t droppedRecords; ///< atomic: records lost, counted here rather than in a thread file
                             ///< (format <= 3: all of them; 4: those of threads without a file,
                             ///< i.e. the sum of droppedWithoutFile)
    EndState endState;
    int32_t exitCode;
    int64_t endMonotonicNs;
    uint32_t hooksUnresolved; ///< functions whose real implementation was not found
    uint32_t parentStartValid;
    int64_t parentStartNs;    ///< start_ns of the parent's process folder (forked children)
    char rankSource[32];      ///< which variable gave the rank ("OMPI_COMM_WORLD_RANK", "MPI", ...)
    char host[64];
    char exe[512];
    char cmdline[3072];       ///< NUL-separated argv, truncated to fit
    uint32_t cmdlineLength;
    ClockSync syncInit;   ///< measured at MPI_Init (rank 0 has offset 0)
    ClockSync syncFinal;  ///< measured at MPI_Finalize
    uint32_t chunksAhead;    ///< atomic: thread-file chunks the provisioning helper mapped ahead
    uint32_t chunksOnThread; ///< atomic: chunks past its first a recording thread mapped itself
    // Format 4: threads whose raw file could not be created (or was closed at thread exit).
    uint32_t threadsWithoutFile;  ///< atomic: threads whose file could not be created
    uint32_t padding0;
    uint64_t firstDropWithoutFileTicks; ///< raw ticks of the first such drop, 0 = none
    uint64_t droppedWithoutFile[kDropReasonCount]; ///< atomic: their records, by DropReason
    uint8_t reserved[4096 - 3984];
};

/// Header at the start of every thread file.
struct ThreadFileHeader {
    uint64_t magic;
    uint32_t version;
    uint32_t recordSize;
    int32_t pid;
    int32_t tid;
    uint64_t reserved;  ///< record slots handed out (atomic, relaxed); the store reads [0, reserved)
    uint64_t capacity;  ///< record slots backed by the file right now
    char threadName[32];
    // Format 4: drop accounting, written by the thread itself (and its signal handlers).
    uint64_t stoppedTicks; ///< raw ticks when the thread stopped recording, 0 = it never did
    uint32_t stopReason;   ///< the DropReason that stopped it (stopsThread()), 0 = none
    int32_t stopErrno;     ///< errno of the file operation that failed, 0 = none
    uint64_t dropped[kDropReasonCount]; ///< records this thread could not record, by DropReason
    uint8_t padding[4096 - 144];
};

/// An intercepted call (or an instant when end == start).
///
/// Field use per family is documented in docs/trace-schema.md; for file I/O:
/// bytes = bytes transferred (the return value), objectId = path string, fd = descriptor,
/// aux = file offset for positioned calls (-1 otherwise), status = errno when the call failed.
struct EventRecord {
    std::atomic<RecordKind> kind; ///< stored last, with release ordering
    uint8_t flags;                ///< kFlag... bits below
    uint16_t op;                  ///< Op id from ops.def
    int32_t status;               ///< errno of a failed call, else 0
    uint64_t start;               ///< raw ticks
    uint64_t end;                 ///< raw ticks
    int64_t bytes;                ///< bytes transferred, -1 = not applicable
    uint32_t objectId;            ///< interned string id (file path, communicator name), 0 = none
    int32_t fd;                   ///< file descriptor, -1 = none
    int32_t peer;                 ///< partner rank, -1 = none
    int32_t tag;                  ///< message tag / secondary argument
    uint32_t commId;              ///< communicator string id, 0 = none
    uint32_t seq;                 ///< per-communicator sequence number
    int64_t aux;                  ///< offset / correlation id / folded count, per op
};

/// An EventRecord as its eight 8-byte words (little-endian, the layout above), for writers
/// that hand a record to the recorder's appendRecord(): stored as whole words, the record is read
/// back at once, where words assembled from narrower stores would wait for those to retire.
struct EventWords {
    uint64_t w[8];
};
static_assert(std::endian::native == std::endian::little, "packEvent() builds little-endian words");
constexpr EventWords packEvent(uint8_t flags, uint16_t op, int32_t status, uint64_t start,
                               uint64_t end, int64_t bytes, uint32_t objectId, int32_t fd,
                               int32_t peer, int32_t tag, uint32_t commId, uint32_t seq,
                               int64_t aux) {
    auto pair = [](uint32_t low, uint32_t high) { return uint64_t(low) | uint64_t(high) << 32; };
    return {{uint64_t(RecordKind::Event) | uint64_t(flags) << 8 | uint64_t(op) << 16 |
                 uint64_t(uint32_t(status)) << 32,
             start, end, uint64_t(bytes), pair(objectId, uint32_t(fd)),
             pair(uint32_t(peer), uint32_t(tag)), pair(commId, seq), uint64_t(aux)}};
}

constexpr uint8_t kFlagSeqValid = 0x01;    ///< seq is a collective instance number
constexpr uint8_t kFlagTagIsCommSize = 0x02; ///< tag carries the communicator size
constexpr uint8_t kFlagFailed = 0x10;
constexpr uint8_t kFlagHasOffset = 0x20;
/// aux = number of calls folded into this event (polls); without kFlagSeqValid, seq holds up to
/// two other operation ids polled in the same loop (low and high 16 bits, 0 = none).
constexpr uint8_t kFlagFolded = 0x40;
constexpr uint8_t kFlagRequest = 0x04; ///< seq = the process's request number of a posted MPI call

/// One send or receive request completed by an MPI wait or test. Written by the completing call
/// just before its own EventRecord, on the same thread: the store attaches the completion
/// records that precede an MPI_Wait* / MPI_Test* event to it (see families/communication/communication_store.cpp).
struct MpiCompletionRecord {
    RecordKind kind;     ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    uint8_t isRecv;      ///< 1 = receive, 0 = send
    uint16_t reserved0;
    uint32_t request;    ///< request number of the posting event (EventRecord::seq, kFlagRequest)
    int32_t peer;        ///< partner world rank; receives: the actual source (-1 = unknown)
    int32_t tag;         ///< message tag; receives: the actual tag
    int64_t bytes;       ///< bytes sent / received, -1 = unknown
    uint8_t reserved[40];
};

/// A piece of an interned string. Long strings span consecutive records with the same id;
/// the piece with `last` set ends it. Defined before any event that refers to the id, in the
/// same thread file.
struct StringRecord {
    std::atomic<RecordKind> kind;
    uint8_t last;
    uint16_t length; ///< bytes of text used in this piece
    uint32_t id;
    char text[56];
};

constexpr size_t kStringPieceSize = sizeof(StringRecord::text);

/// Up to seven more calls of a run: each repeats the call `period` calls before it (1: a loop of
/// one call; 2: a loop of two alternating calls, such as an RDMA post and its poll, or an lseek
/// and a read), with the same bytes except their start and end times and a counter that
/// advances by `step` per repetition (see RepeatLayout). Such loops cost 8 bytes a call instead
/// of 64. The run is the `period` full records right before its first Repeat, then its Repeats:
/// the writer starts a Repeat only in the slot right after its run (no other record in between),
/// so file order stays time order.
///
/// Entry k (k = 0.. until a zero entry): (gap << 32) | (duration + 1), in raw ticks; the call's
/// start = the previous call's end + gap, its end = start + duration. The kind byte is stored
/// (release) with the first entry; later entries are single 8-byte stores.
struct RepeatRecord {
    RecordKind kind;
    uint8_t period;       ///< 1 or 2 (0, as format 2 wrote it: 1)
    uint8_t reserved[2];
    int32_t step;         ///< added to the counter per repetition (the same for both calls of a
                          ///< period-2 run)
    uint64_t entries[7];
};
constexpr uint32_t kRepeatEntries = 7;
constexpr uint64_t kRepeatMaxTicks = 0xffffffffull; ///< gap <= this, duration < this

/// Where a repeatable record keeps what may differ between repeated calls: start ticks at byte
/// 8, end ticks at byte `endOffset`, a `counterBytes`-byte counter at `counterOffset` (4 bytes:
/// wraps at 32 bits). Every other byte of a repetition equals its run's full record.
struct RepeatLayout {
    uint8_t endOffset;
    uint8_t counterOffset;
    uint8_t counterBytes;
};
constexpr uint8_t kRepeatStartOffset = 8;
/// EventRecord (counter: seq) and RdmaRecord Call (counter: posted, in practice constant).
constexpr RepeatLayout kSpanRepeat{16, 52, 4};
/// RdmaRecord PostOne / PollOne (end: u.postOne.end / u.pollOne.end; counter: the wr_id).
constexpr RepeatLayout kOneWrRepeat{56, 16, 8};

static_assert(sizeof(ProcessHeader) == kHeaderSize, "process header must stay one page");
static_assert(sizeof(ThreadFileHeader) == kHeaderSize, "thread header must stay one page");
static_assert(sizeof(EventRecord) == kRecordSize);
static_assert(sizeof(StringRecord) == kRecordSize);
static_assert(sizeof(MpiCompletionRecord) == kRecordSize);
static_assert(sizeof(RepeatRecord) == kRecordSize && sizeof(EventWords) == kRecordSize);
static_assert(offsetof(EventRecord, status) == 4 && offsetof(EventRecord, objectId) == 32 &&
              offsetof(EventRecord, peer) == 40 && offsetof(EventRecord, commId) == 48 &&
              offsetof(EventRecord, aux) == 56, "packEvent() follows this layout");
static_assert(offsetof(EventRecord, end) == kSpanRepeat.endOffset &&
              offsetof(EventRecord, seq) == kSpanRepeat.counterOffset);
static_assert(std::atomic<RecordKind>::is_always_lock_free);
static_assert(offsetof(EventRecord, kind) == 0 && offsetof(StringRecord, kind) == 0);

// ---------------------------------------------------------------------------------------------
// GPU section: NVTX, NCCL and CUPTI records (collector/nvtx, interpose/nccl, collector/cupti).
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

/// An NCCL API call or a profiler-plugin event (interpose/nccl). Plugin ProxyOp records carry
/// channel in `stream`, isSend in `redop` and nSteps*chunkSize in `count`; KernelCh records the
/// channel in `stream` and the GPU start timer in `count`.
/// For communicator creation ops count = nranks and peer = this rank in the communicator.
struct NcclRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    uint8_t result;     ///< ncclResult_t of the call (0 = success)
    uint16_t op;        ///< Op id from ops.def (NCCL range)
    uint8_t datatype;   ///< ncclDataType_t, 255 = n/a
    uint8_t redop;      ///< ncclRedOp_t (0 sum .. 4 avg, 5 = user-defined), 255 = n/a
    uint8_t groupDepth; ///< ncclGroupStart nesting at the call (0 = not in a group)
    uint8_t flags;      ///< kNcclFromPlugin
    uint64_t start;     ///< raw ticks
    uint64_t end;       ///< raw ticks
    uint64_t count;     ///< element count (init ops: nranks)
    uint64_t stream;    ///< cudaStream_t value
    uint64_t externalId; ///< CUPTI external correlation id pushed around the call, 0 = none
    uint32_t commKeyId; ///< string id of the communicator key ("nccl:<hash>"), 0 = none
    uint32_t seq;       ///< per-communicator collective instance, kNoSeq for other ops
    int32_t peer;       ///< root (rooted collectives), peer (p2p), rank (init ops), -1 = none
    uint32_t group;     ///< per-thread group ordinal (0 = none); plugin: NCCL's function name id
};

constexpr uint32_t kNoSeq = 0xffffffffu;
constexpr uint8_t kNcclFromPlugin = 0x01;
constexpr uint8_t kNcclCommInfo = 0x02; ///< plugin init: count = nranks, peer = rank; not an event
constexpr uint8_t kNcclDropped = 0x04;  ///< plugin pool exhausted: `count` events were not recorded

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
    uint32_t stream;        ///< CUPTI stream id (Api: calling thread's tid)
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

// ---------------------------------------------------------------------------------------------
// RDMA section: verbs capture (interpose/ibverbs), converted by families/rdma/rdma_records.cpp.
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
static_assert(offsetof(RdmaRecord, u.postOne.end) == kOneWrRepeat.endOffset &&
              offsetof(RdmaRecord, u.pollOne.end) == kOneWrRepeat.endOffset &&
              offsetof(RdmaRecord, u.wr.wrId) == kOneWrRepeat.counterOffset &&
              offsetof(RdmaRecord, u.wc.wrId) == kOneWrRepeat.counterOffset);

/// How `record` (a full 64-byte record) may be repeated by a RepeatRecord, or nullptr if not.
inline const RepeatLayout* repeatLayout(const void* record) {
    const auto* b = static_cast<const uint8_t*>(record);
    if (b[0] == uint8_t(RecordKind::Event)) return &kSpanRepeat;
    if (b[0] != uint8_t(RecordKind::Rdma)) return nullptr;
    switch (RdmaAction(b[1])) {
    case RdmaAction::Call: return &kSpanRepeat;
    case RdmaAction::PostOne:
    case RdmaAction::PollOne: return &kOneWrRepeat;
    default: return nullptr;
    }
}

// ---------------------------------------------------------------------------------------------
// Counter section: CPU counters (collector/counters), converted by families/counters/counter_records.
// ---------------------------------------------------------------------------------------------
//
// A process's counter set is described once by CounterDefRecords (written by the counters sampler
// thread at start): counter `nameId` is value slot `slot` of every sample, or is unavailable with
// `reasonId`. A sample of one thread (`tid`; 0 = process-wide counters such as PAPI SDEs) at one
// instant spans ceil(n / 6) CounterRecords with the same ts, each carrying slots
// [first, first + count). Samples are written by the thread itself at region boundaries and by
// the sampler thread on its timer, so a thread's samples may sit in two thread files.

/// Where a counter's values come from.
enum class CounterSource : uint8_t {
    None = 0,      ///< unavailable (CounterDefRecord::reasonId says why)
    Papi = 1,      ///< PAPI preset, native or software-defined event
    PerfSw = 2,    ///< perf_event_open software counter
    Rusage = 3,    ///< getrusage(RUSAGE_THREAD) / /proc/<tid>/stat|status
    Schedstat = 4, ///< /proc/<tid>/schedstat (on-CPU time, run-queue wait)
    Test = 5,      ///< a test-only source
};

enum class CounterUnit : uint8_t { Count = 0, Ns = 1 };

/// Why a sample was taken.
enum class CounterTrigger : uint8_t {
    Timer = 1,  ///< the sampler's period
    Enter = 2,  ///< entry of an MPI / I/O call (region boundary)
    Exit = 3,   ///< exit of that call
    Start = 4,  ///< the thread was first seen
    End = 5,    ///< the thread or process ended (last value)
};

constexpr uint8_t kNoCounterSlot = 255;
constexpr uint64_t kCounterMissing = ~0ull; ///< a value that could not be read in this sample
constexpr uint32_t kCounterProcessWide = 0x01; ///< CounterDef flag: samples carry tid 0
constexpr uint32_t kCounterFallback = 0x02;    ///< CounterDef flag: not the first-choice source

struct CounterDefRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    CounterSource source;
    uint8_t slot;    ///< value index in samples, kNoCounterSlot when unavailable
    CounterUnit unit;
    uint32_t nameId;   ///< string id of the counter name (task_clock, PAPI_TOT_INS, ...)
    uint32_t reasonId; ///< string id of why it is unavailable or degraded, 0 = none
    uint32_t flags;    ///< kCounterProcessWide, kCounterFallback
    int32_t onlineCpus;   ///< CPUs online on this host
    int32_t affinityCpus; ///< CPUs this process may run on
    uint64_t periodNs;    ///< timer sampling period, 0 = no timer
    uint8_t reserved[32];
};

struct CounterRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    CounterTrigger trigger;
    uint8_t first; ///< slot of values[0]
    uint8_t count; ///< values used (1..6)
    int32_t tid;   ///< sampled thread, 0 = process-wide
    uint64_t ts;   ///< raw ticks
    uint64_t values[6]; ///< running totals; kCounterMissing = not read this time
};

constexpr uint32_t kCounterValuesPerRecord = 6;
static_assert(sizeof(CounterDefRecord) == kRecordSize && sizeof(CounterRecord) == kRecordSize);
static_assert(std::is_trivially_copyable_v<CounterDefRecord> &&
              std::is_trivially_copyable_v<CounterRecord>);
static_assert(offsetof(CounterDefRecord, kind) == 0 && offsetof(CounterRecord, kind) == 0);

} // namespace hpcprof::schema::raw
