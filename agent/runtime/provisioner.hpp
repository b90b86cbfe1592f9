// SPDX-License-Identifier: MIT
// Provides the memory behind each thread's raw file: maps the file chunk by chunk and faults the
// pages in, either on the recording thread (when it runs out) or ahead of it on a helper task.
//
// Why a helper: on the machines we measure, a fresh page of a shared file mapping costs 1.5-4 us
// (page-cache allocation, zeroing, delayed block allocation), i.e. 25-60 ns for each 64-byte
// record, more than every other part of recording together. The helper maps the next chunk while
// the thread fills the current one, so the thread only bumps an index.
//
// The helper is a clone(CLONE_VM) task, not a pthread: it shares the address space (to map into
// the thread's reservation) but not the descriptor table, because a second *thread* makes every
// descriptor system call of a single-threaded program dearer (the kernel then reference-counts
// each file it looks up; 50-60 ns per pwrite measured). It closes the descriptors it inherited
// (it must not hold the program's pipes open), blocks all signals, issues only raw system calls
// (it runs on the creating thread's TLS pointer) and exits when asked, when the program execs or
// exits, or when its parent is gone. Everything still works without it (HPCPROF_PROVISION_HELPER=0,
// clone refused, non-x86-64): threads then map their chunks themselves.
//
// Spare thread files: creating a file is the dearest part of a thread's start (120-280 us on a
// busy ext4, milliseconds on a parallel filesystem, against 2 us to open one). Once a process
// starts its third thread, the helper keeps a few files created ahead (thread-spare-<n>, their
// first chunks secured), and a starting thread takes one with an atomic increment and an open.
// The batch doubles whenever threads start faster than the helper keeps up (up to 64); the ones
// left at exit are removed (the store skips one left by a killed process: its header is empty).
#pragma once

#include <atomic>
#include <cstdint>

namespace hpcprof::agent::provision {

/// One recording thread's file, as the helper sees it. Lives in a static pool (a thread's TLS is
/// freed when it exits, while the helper may still hold a request for it).
///
/// Mapping a chunk is idempotent (the file only grows, through fallocate, and a chunk always
/// lands at the same address from the same file offset; chunk_geometry.hpp says which slots it
/// covers), so the thread and the helper never wait for each other: a thread that needs a chunk
/// the helper has not finished maps it itself. The only exclusion is at thread exit: the
/// reservation must not be unmapped under the helper.
struct Lane {
    std::atomic<uint32_t> inUse{0};      ///< 0 free, 2 being claimed, 1 owned by a live thread,
                                         ///< 3 retired: the helper unmaps it, then frees it
    std::atomic<uint32_t> helperBusy{0}; ///< the helper is mapping into this reservation
    char* base = nullptr;                ///< the thread's reservation: header, then records
    uint64_t maxSlots = 0;               ///< per-thread record limit
    char file[40] = {};                  ///< the file's name in the process folder
    int32_t index = -1;                  ///< position in the pool, -1 = private (never helped)
    std::atomic<uint64_t> ready{0};      ///< slots [0, ready) are mapped and faulted in
    std::atomic<uint64_t> want{0};       ///< slots the thread asked to have ready
    uint32_t quietChunks = 0;            ///< thread only: chunks to go without asking the helper
    uint64_t reservationBytes = 0;       ///< retired: what the helper unmaps at base
};

/// Where thread files live, how they grow (`startBytes`: what a new file has secured, header
/// included), and where chunks are counted (by the helper and by threads themselves; the process
/// header's counters). Called at process start and in a forked child; `procDir` and the counters
/// must stay valid.
void configure(const char* procDir, uint64_t chunkBytes, uint64_t startBytes, bool helperAllowed,
               uint32_t* chunksAhead, uint32_t* chunksOnThread);

/// Opens a raw file for a starting thread: a spare made ahead, its first `startBytes` secured
/// (`secured` = true), else a new <procDir>/thread-<tid> (its space is the caller's to secure;
/// thread-<tid>-<k> if a thread of the same id, reused by the kernel in a long run, has a file
/// already: files are never replaced). `path` (1500 bytes) gets the file's path. Returns the
/// descriptor or -errno. Thread-safe.
long openThreadFile(int32_t tid, char* path, bool& secured);

/// A lane for a thread whose header and first `readySlots` record slots are already mapped at
/// `base`, from the file named `file` in the process folder; nullptr if none can be had.
Lane* claimLane(char* base, uint64_t maxSlots, const char* file, uint64_t readySlots);
/// The thread is exiting. With the helper running, the lane is retired: the helper unmaps the
/// thread's reservation (`reservationBytes` at lane->base) later, off the thread's exit path
/// (an unmap costs a TLB shoot-down on every CPU the process runs on: 25-50 us measured in a
/// VM, most of a short thread's exit), and returns true. Otherwise it waits until the helper is
/// out of the reservation, frees the lane and returns false: the caller unmaps.
bool releaseLane(Lane* lane, uint64_t reservationBytes);

/// Maps chunks until `slot` is backed (on the calling thread). 0, or the errno of the file
/// operation that failed (ENOSPC, EDQUOT, ...): nothing past the mapped chunks may be touched.
int provideUpTo(Lane& lane, uint64_t slot);
/// Asks the helper to have `slots` ready (started on first use). Cheap when already asked.
void requestAhead(Lane& lane, uint64_t slots);

/// The process is ending (exit, _exit, exec): stops and reaps the helper and removes the spare
/// files no thread took. Not for a vfork child (same memory, other pid): markEnd(), the only
/// caller, returns before it gets here.
void stopHelper();
/// An exec failed: the process goes on, and may start a helper again.
void allowHelperAgain();
/// In a forked child: the helper and the lanes belong to the parent.
void resetAfterFork();

} // namespace hpcprof::agent::provision
