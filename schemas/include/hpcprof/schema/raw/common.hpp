// SPDX-License-Identifier: MIT
// The records and headers every family shares (raw_format.hpp describes the whole format):
// versions, record kinds, the process and thread headers, the generic call record, strings and
// repeats.
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
/// stop fields and drop counts by DropReason, ProcessHeader drops of threads without a file);
/// 5: the process's working directory (ProcessHeader::cwdStringId); 6: the call each thread is
/// inside (ThreadFileHeader::inFlight).
constexpr uint32_t kFormatVersion = 6;
constexpr uint32_t kOldestReadableVersion = 1; ///< what this reader still reads (1: no repeats)
constexpr uint32_t kRecordSize = 64;
constexpr uint32_t kHeaderSize = 4096;

/// Record discriminator; the first byte of every record. Empty = never committed. The values are
/// stored in raw files: never renumber. Families own ranges: the agent's own records 1-9, the GPU
/// family 10-12, RDMA 13, counters 20-21.
enum class RecordKind : uint8_t {
    Empty = 0,
    Event = 1,         ///< an intercepted call or an instant (EventRecord)
    String = 2,        ///< a piece of an interned string (StringRecord)
    MpiCompletion = 3, ///< one request an MPI wait/test completed (MpiCompletionRecord, raw/mpi.hpp)
    Repeat = 4,        ///< more calls like the record in the slot before it (RepeatRecord)
    Nvtx = 10,         ///< an NVTX push/pop/start/end/mark (NvtxRecord, raw/gpu.hpp)
    Nccl = 11,         ///< an NCCL API call or profiler-plugin event (NcclRecord, raw/gpu.hpp)
    Gpu = 12,          ///< a CUPTI activity record translated by the drain thread (GpuRecord)
    Rdma = 13,         ///< a verbs call, work request, completion or resource change (raw/rdma.hpp)
    Counter = 20,      ///< one sample of up to 6 counters of one thread (raw/counters.hpp)
    CounterDef = 21,   ///< what counter slot k is, or why a counter is unavailable
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
    // Format 5: the working directory the process started in (getcwd() when the agent started),
    // a string id of this process (or of its parent, for a forked child); 0 = not recorded. It
    // is interned with the process's first thread file, so a process that never records has none.
    uint32_t cwdStringId; ///< atomic
    uint32_t padding1;
    uint8_t reserved[4096 - 3992];
};

/// The call a thread is inside right now (format 6): published by the thread at the call's entry
/// and cleared at its exit, in its own file's header, so that a hung, killed or still running
/// process's current calls can be read from outside (`hpcprof status`, the store's unfinished
/// events). Only the thread's outermost recorded call is published (a call the library makes to
/// itself inside it, or a signal handler's call, leaves the line alone). One cache line written
/// by its thread only: `seq` is odd while the thread writes the line (a reader that sees an odd
/// value, or different values before and after copying the line, read it torn and retries).
/// The fields mean what they mean in an EventRecord, except `bytes`: what the call asked for
/// (the count of a read or write, the message size of a send or receive), not what it moved.
struct InFlightCall {
    uint32_t seq;      ///< odd while being written
    uint16_t op;       ///< Op id from ops.def; 0 = the thread is inside no recorded call
    uint8_t flags;     ///< kFlag... bits of EventRecord (kFlagSeqValid: `instance` is set)
    uint8_t reserved0;
    uint64_t start;    ///< raw ticks at the call's entry
    int64_t bytes;     ///< bytes requested, -1 = not applicable or unknown
    uint32_t objectId; ///< interned file path (I/O), 0 = none
    int32_t fd;        ///< file descriptor, -1 = none
    int32_t peer;      ///< partner world rank (or a rooted collective's root), -1 = none or any
    int32_t tag;       ///< message tag (point-to-point) or communicator size (collectives)
    uint32_t commId;   ///< communicator string id, 0 = none
    uint32_t instance; ///< collective instance on the communicator (kFlagSeqValid)
    int64_t aux;       ///< file offset of a positioned call (kFlagHasOffset), else -1
    /// MPI_Wait/Waitany/Waitall/Waitsome: how many requests the call waits on (peer, tag, commId
    /// and bytes are then those of the first pending receive among them, else the first pending
    /// send); 0 = not a wait (older agents wrote 0 here: the field was reserved).
    uint64_t requests;
};
static_assert(sizeof(InFlightCall) == 64);

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
    uint8_t padding0[192 - 144];
    // Format 6: the call the thread is inside, on a cache line of its own.
    InFlightCall inFlight;
    uint8_t padding[4096 - 256];
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
/// InFlightCall only: not a call the thread is inside but a state it is in (polling a completion
/// queue that gave nothing since `start`); any recorded call may take the line over.
constexpr uint8_t kInFlightPolling = 0x80;

/// How the MPI agent keys a communicator it did not see being created ("unknown@<world rank>.<n>"):
/// its calls cannot be matched across ranks, and the analysis reports them by this key.
constexpr char kUnknownCommunicatorPrefix[] = "unknown@";

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

static_assert(sizeof(ProcessHeader) == kHeaderSize, "process header must stay one page");
static_assert(sizeof(ThreadFileHeader) == kHeaderSize, "thread header must stay one page");
static_assert(offsetof(ThreadFileHeader, inFlight) == 192, "inFlight owns one cache line");
static_assert(sizeof(EventRecord) == kRecordSize);
static_assert(sizeof(StringRecord) == kRecordSize);
static_assert(sizeof(RepeatRecord) == kRecordSize && sizeof(EventWords) == kRecordSize);
static_assert(offsetof(EventRecord, status) == 4 && offsetof(EventRecord, objectId) == 32 &&
              offsetof(EventRecord, peer) == 40 && offsetof(EventRecord, commId) == 48 &&
              offsetof(EventRecord, aux) == 56, "packEvent() follows this layout");
static_assert(offsetof(EventRecord, end) == kSpanRepeat.endOffset &&
              offsetof(EventRecord, seq) == kSpanRepeat.counterOffset);
static_assert(std::atomic<RecordKind>::is_always_lock_free);
static_assert(offsetof(EventRecord, kind) == 0 && offsetof(StringRecord, kind) == 0);

} // namespace hpcprof::schema::raw
