// SPDX-License-Identifier: MIT
// The in-process recorder: what hooks call to append records to the calling thread's buffer.
//
// Each thread owns a raw file (see raw_format.hpp). At the thread's first event the recorder
// reserves a range of address space as large as the per-thread limit and maps the file into it
// chunk by chunk as it grows, so slot k always lives at base + 64*k. Appending is a bump of the
// thread's slot index (one non-locked xadd, which a signal handler on the same thread cannot
// tear), a bounds check, filling 64 bytes and a release store of the kind byte. A call that
// repeats the thread's previous one is an 8-byte entry of a Repeat record instead
// (appendRecord, record_append.cpp).
//
// Hot-path rules: no lock, no malloc, no syscall per event; syscalls only when a chunk is
// mapped or asked for (chunk_geometry.hpp: a file starts with one page of records and doubles up
// to HPCPROF_CHUNK_KB) and at thread/process start. Chunks are normally mapped ahead of the
// thread by the provisioning helper (provisioner.hpp).
//
// Never harm: no page of a raw file is touched before its blocks exist (file_space.hpp). A full
// disk, an exhausted quota, a file error or the per-thread limit stop that thread's recording:
// its later records are counted by reason in its file's header (or, without a file, in the
// process header), with the time it stopped, and the program runs on.
#pragma once

#include <cstddef>
#include <cstdint>

#include "clock.hpp"
#include "in_flight.hpp"
#include "hpcprof/launch/config.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "provisioner.hpp"

namespace hpcprof::agent {

namespace detail {
// 0 = not started, 1 = starting, 2 = recording, 3 = passive (no raw dir, or it failed).
extern int g_state;
extern uint32_t g_sources;
extern int64_t g_clockSkewTicks;
extern uint32_t g_generation;

/// Hot per-thread state. Kept tiny: an initial-exec TLS block must fit the static TLS area even
/// if the agent is dlopen'ed (CUDA injection) rather than preloaded.
struct alignas(64) ThreadState {
    // Hot fields first, in the block's first cache line (the struct is line-aligned): what
    // every append reads and writes.
    uint32_t generation; // == g_generation once initialised in this process
    bool growing;        // a chunk is being mapped (a signal handler must not map too)
    bool failed;         // not recording (no file, or it stopped): drop everything, stopReason why
    uint8_t stopReason;  // schema::raw::DropReason of the drops while `failed`
    // The run of repeated calls appendRecord() extends (RepeatRecord in raw_format.hpp). It
    // can go on only while the run's latest record is the thread's latest slot.
    bool appending;      // in appendRecord (a signal handler landing there writes in full)
    uint32_t runUsed;    // entries used in runRepeat
    char* base;          // reservation start: header at base, slot k at base + 4096 + 64k; stays
                         // mapped (with its header) after the thread stopped recording
    uint64_t next;       // next free slot
    uint64_t mapped;     // slots usable without asking: backed by the file, and short of the
                         // point where the next chunk should be mapped or asked for
                         // (reserveSlotSlow)
    const char* runNext;       // the full record the run's next call must repeat; null = no run
    uint64_t runNextCounter;   // counter of the latest call of that record (or its own)
    schema::raw::RepeatRecord* runRepeat; // its current Repeat record, nullptr = none yet
    uint64_t runSlot;          // slot of the run's latest record (full or Repeat)
    uint64_t runEnd;           // end ticks of the run's latest call
    // A run of period 2 (two alternating calls): the other full record, which the call after
    // next must repeat; nullptr for period 1 (each call repeats the one before).
    const char* runOther;
    uint64_t runOtherCounter;
    // A run that is still one bare full record may become a period-2 run with the full record
    // right before it (nullptr: none such).
    const char* runBefore;
    uint64_t runBeforeCounter;
    uint64_t maxSlots;   // per-thread limit
    provision::Lane* lane; // how the file grows (shared with the provisioning helper)
    int32_t tid;
};
extern constinit thread_local ThreadState t_thread __attribute__((tls_model("initial-exec")));

constexpr uint64_t kNoSlot = ~0ull;
/// Slow path of reserveSlot(): thread start (slot == kNoSlot) or the next chunk.
char* reserveSlotSlow(uint64_t slot);

inline uint64_t bumpSlot(uint64_t* slot) {
#if defined(__x86_64__)
    // One instruction without a lock prefix: atomic with respect to a signal handler on this
    // thread (the only other writer), and much cheaper than `lock xadd`.
    uint64_t v = 1;
    asm volatile("xaddq %0, %1" : "+r"(v), "+m"(*slot) : : "memory");
    return v;
#else
    return __atomic_fetch_add(slot, 1, __ATOMIC_RELAXED);
#endif
}
} // namespace detail

/// Reserves one 64-byte slot in the calling thread's file; nullptr = dropped (counted).
/// Async-signal-safe. Fill the record, then store its kind byte with release ordering.
inline char* reserveSlot() {
    detail::ThreadState& t = detail::t_thread;
    if (t.generation != detail::g_generation || t.failed) [[unlikely]]
        return detail::reserveSlotSlow(detail::kNoSlot);
    uint64_t slot = detail::bumpSlot(&t.next);
    if (slot >= t.mapped) [[unlikely]]
        return detail::reserveSlotSlow(slot);
    return t.base + schema::raw::kHeaderSize + slot * schema::raw::kRecordSize;
}

/// Starts the recorder once per process (idempotent, thread-safe). Called from the agent's
/// constructor and lazily from the first hook that runs before it.
void ensureStarted();

/// True when the calling thread should record source `bit`. Thread-safe, async-signal-safe.
inline bool recording(SourceBit bit) {
    int s = __atomic_load_n(&detail::g_state, __ATOMIC_ACQUIRE);
    if (s != 2) [[unlikely]] {
        if (s != 0) return false;
        ensureStarted();
        if (__atomic_load_n(&detail::g_state, __ATOMIC_ACQUIRE) != 2) return false;
    }
    return (detail::g_sources & uint32_t(bit)) != 0;
}

/// Ticks for event timestamps (with the test-only skew applied).
inline uint64_t now() { return readTicks() + uint64_t(detail::g_clockSkewTicks); }

/// Reserves the next record slot of the calling thread, or nullptr when the per-thread limit is
/// reached (the drop is counted). Fill the record, then store its kind byte with release
/// ordering. Async-signal-safe.
inline schema::raw::EventRecord* reserveEvent() {
    return reinterpret_cast<schema::raw::EventRecord*>(reserveSlot());
}

/// Appends one complete 64-byte record (`image`, its kind byte set). A call that repeats this
/// thread's previous one (an EventRecord, or an RdmaRecord Call / PostOne / PollOne, equal but
/// for its times and a counter advancing by a fixed step: raw_format.hpp, RepeatRecord) becomes
/// an 8-byte entry of a Repeat record instead: a tight loop of identical calls writes an eighth
/// of the bytes. Async-signal-safe, no syscall but the recorder's chunk growth.
void appendRecord(const void* image);

/// Records one call: a convenience over appendRecord() for the common fields.
struct EventFields {
    schema::Op op;
    uint64_t start;
    uint64_t end;
    int64_t bytes = -1;
    uint32_t objectId = 0;
    int32_t fd = -1;
    uint8_t flags = 0;
    int32_t status = 0;
    int32_t peer = -1;
    int32_t tag = 0;
    uint32_t commId = 0;
    uint32_t seq = 0;
    int64_t aux = -1;
};
inline void recordEvent(const EventFields& f) {
    const schema::raw::EventWords r =
        schema::raw::packEvent(f.flags, uint16_t(f.op), f.status, f.start, f.end, f.bytes,
                               f.objectId, f.fd, f.peer, f.tag, f.commId, f.seq, f.aux);
    appendRecord(&r);
}

/// The calling thread's in-flight line (raw::InFlightCall in its file header), nullptr when the
/// thread has no file. Starts the thread's file at its first call (the one slow path).
schema::raw::InFlightCall* inFlightLineSlow();
inline schema::raw::InFlightCall* inFlightLine() {
    const detail::ThreadState& t = detail::t_thread;
    if (t.generation != detail::g_generation) [[unlikely]]
        return inFlightLineSlow();
    if (!t.base) return nullptr;
    return &reinterpret_cast<schema::raw::ThreadFileHeader*>(t.base)->inFlight;
}

/// Publishes `call` as the call the thread is now inside (in_flight.hpp); the line to hand to
/// endCall() at its exit, nullptr when nothing was published. Async-signal-safe, no syscall.
inline schema::raw::InFlightCall* beginCall(const schema::raw::InFlightCall& call) {
    return publishInFlight(inFlightLine(), call);
}

/// Clears what beginCall() published (`line` as it returned; nullptr: nothing to do).
inline void endCall(schema::raw::InFlightCall* line) { clearInFlight(line); }

/// An InFlightCall of `op` entered at `start`, nothing else known yet.
inline schema::raw::InFlightCall inFlightCall(schema::Op op, uint64_t start) {
    schema::raw::InFlightCall c{};
    c.op = uint16_t(op);
    c.start = start;
    c.bytes = -1;
    c.fd = -1;
    c.peer = -1;
    c.aux = -1;
    return c;
}

/// Interns `len` bytes of text: writes its definition into the calling thread's file and returns
/// its process-wide id (0 if it could not be recorded). Async-signal-safe, no allocation.
uint32_t internString(const char* text, size_t len);

/// Sets the rank once MPI knows it (overrides the launcher environment).
void setRank(int rank, int worldSize, const char* source);

/// Marks how the process is ending; called from exit paths (exit, _exit, exec).
void markEnd(schema::raw::EndState state, int exitCode);

/// Counts hooks whose real function could not be resolved.
void countUnresolvedHook();

/// CLOCK_MONOTONIC ns with the test-only skew applied (what this process believes the time is).
int64_t localNs();

/// Stores a clock-offset measurement against rank 0 in the process header (0 = init, 1 = final).
void recordClockSync(int which, int64_t localNs, int64_t offsetNs, int64_t rttNs);

} // namespace hpcprof::agent
