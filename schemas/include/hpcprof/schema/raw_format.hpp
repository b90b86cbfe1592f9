// SPDX-License-Identifier: MIT
// The raw capture ABI: what the in-process agent writes and the store step reads.
//
// A run's raw directory holds one folder per process:
//
//   RAWDIR/
//     proc-<pid>-<start_ns>/
//       process.bin        one ProcessHeader (4 KiB), memory-mapped, updated in place
//       thread-<tid>.bin   ThreadFileHeader (4 KiB) + fixed-size 64-byte records, grown in chunks
//
// Thread file layout:
//
//   0        4096                 4096 + 64*k
//   +--------+--------+--------+-- ... --+--------+----------------- (zero-filled tail)
//   | header | rec 0  | rec 1  |         | rec k-1| unused slots
//   +--------+--------+--------+-- ... --+--------+-----------------
//
// Both files are MAP_SHARED mappings, so every completed record reaches the page cache the moment
// it is written and survives SIGKILL or a crash of the process. A record is "committed" when its
// first byte (kind) is non-zero: writers fill the body first and store the kind last with release
// ordering. header.reserved counts slots handed out; a reserved slot whose kind is still Empty was
// interrupted (killed mid-record) and is counted as torn by the store.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hpcprof::schema::raw {

constexpr uint64_t kProcessMagic = 0x31435250'46504348ull; // "HCPFPRC1" little endian
constexpr uint64_t kThreadMagic = 0x31444854'46504348ull;  // "HCPFTHD1"
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kRecordSize = 64;
constexpr uint32_t kHeaderSize = 4096;

/// Record discriminator; the first byte of every record. Empty = never committed.
enum class RecordKind : uint8_t {
    Empty = 0,
    Event = 1,  ///< an intercepted call or an instant (EventRecord)
    String = 2, ///< a piece of an interned string (StringRecord)
};

/// Which clock the raw ticks come from.
enum class ClockKind : uint32_t {
    Monotonic = 0, ///< ticks are CLOCK_MONOTONIC nanoseconds
    Tsc = 1,       ///< ticks are invariant TSC cycles; convert with the calibration pairs
};

/// What a file descriptor refers to, so analysis can tell storage I/O from pipes and sockets.
enum class ObjectKind : uint8_t {
    Unknown = 0,
    RegularFile = 1,
    Pipe = 2,
    Socket = 3,
    Device = 4,     ///< character or block device (/dev/null, a tty, a disk)
    ProcSys = 5,    ///< /proc or /sys pseudo files
    SharedMem = 6,  ///< /dev/shm
    Directory = 7,
    Other = 8,
};

/// How a process ended, as far as the agent could tell.
enum class EndState : uint32_t {
    Running = 0, ///< never reached an exit path: killed, crashed, or still running
    Exited = 1,  ///< exit() / return from main (atexit ran)
    QuickExit = 2, ///< _exit() / _Exit()
    Exec = 3,    ///< replaced its image with exec*(); the new image is a separate process folder
};

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
    uint64_t droppedRecords; ///< atomic: events lost to the buffer limit, all threads
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
    uint8_t reserved[4096 - 3836];
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
    uint8_t padding[4096 - 72];
};

/// An intercepted call (or an instant when end == start).
///
/// Field use per family is documented in docs/trace-schema.md; for file I/O:
/// bytes = bytes transferred (the return value), objectId = path string, fd = descriptor,
/// aux = file offset for positioned calls (-1 otherwise), status = errno when the call failed.
struct EventRecord {
    std::atomic<RecordKind> kind; ///< stored last, with release ordering
    uint8_t flags;                ///< low 4 bits: ObjectKind; kFlagFailed; kFlagHasOffset
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

constexpr uint8_t kObjectKindMask = 0x0f;
constexpr uint8_t kFlagFailed = 0x10;
constexpr uint8_t kFlagHasOffset = 0x20;

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

static_assert(sizeof(ProcessHeader) == kHeaderSize, "process header must stay one page");
static_assert(sizeof(ThreadFileHeader) == kHeaderSize, "thread header must stay one page");
static_assert(sizeof(EventRecord) == kRecordSize);
static_assert(sizeof(StringRecord) == kRecordSize);
static_assert(std::atomic<RecordKind>::is_always_lock_free);
static_assert(offsetof(EventRecord, kind) == 0 && offsetof(StringRecord, kind) == 0);

} // namespace hpcprof::schema::raw
