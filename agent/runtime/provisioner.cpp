// SPDX-License-Identifier: MIT
// Chunk provisioning for thread raw files, on the recording thread or ahead of it on a helper
// task (see provisioner.hpp for why a clone(CLONE_VM) task and what it may not do).
#include "provisioner.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "chunk_geometry.hpp"
#include "clock.hpp"
#include "file_space.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "raw_syscall.hpp"
#include "text_append.hpp"

namespace hpcprof::agent::provision {

namespace raw = schema::raw;

namespace {

constexpr int kMadvPopulateWrite = 23; // MADV_POPULATE_WRITE (Linux 5.14), absent from old headers
constexpr long kSysCloseRange = 436;   // close_range (Linux 5.9)
constexpr int kPoolSize = 4096;
constexpr size_t kHelperStackBytes = 64 * 1024;
constexpr long kHelperPollNs = 100'000'000; // how often an idle helper checks its parent is alive
constexpr uint32_t kQuietChunksAfterOutrun = 2;
constexpr int64_t kHelperGoneNs = 2'000'000'000; // a helper visit this long: the helper died

// Lane::inUse.
constexpr uint32_t kLaneFree = 0, kLaneOwned = 1, kLaneClaiming = 2, kLaneRetired = 3;
// Retired lanes the helper has not unmapped yet; it is woken every kRetiredBatch of them.
constexpr uint32_t kRetiredBatch = 16;
std::atomic<uint32_t> g_lanesRetired{0};

struct alignas(64) PoolEntry {
    Lane lane;
};
PoolEntry g_pool[kPoolSize];
std::atomic<int> g_poolHigh{0}; // lanes [0, high) have been handed out at least once

const char* g_procDir = "";
uint64_t g_chunkBytes = 1 << 20;
uint64_t g_startBytes = 3 * 4096; // what a new thread file has secured (header included)
bool g_helperAllowed = false;
uint32_t* g_chunksAhead = nullptr;    // process header counters (null: not counted)
uint32_t* g_chunksOnThread = nullptr;
int g_processPid = 0; // the process these lanes belong to (a vfork child differs)

enum HelperState : int { kNone = 0, kStarting = 1, kRunning = 2, kStopped = 3, kRefused = 4 };
std::atomic<int> g_helperState{kNone};
std::atomic<uint32_t> g_wake{0}; // futex word: 1 = a lane wants more
std::atomic<uint32_t> g_stop{0};
int g_helperPid = 0;
char* g_helperStack = nullptr;

// Spare thread files (provisioner.hpp): [taken, made) are ready for threads to take; the helper
// makes them until `wanted`. `batch` is how many a burst of thread starts keeps ahead.
constexpr uint32_t kFirstSpareBatch = 4;
constexpr uint32_t kMaxSpareBatch = 64;
constexpr uint32_t kThreadFilesBeforeSpares = 2; // a process's first two threads make their own
std::atomic<uint32_t> g_sparesMade{0};
std::atomic<uint32_t> g_sparesTaken{0};
std::atomic<uint32_t> g_sparesWanted{0};
std::atomic<uint32_t> g_spareBatch{kFirstSpareBatch};
std::atomic<uint32_t> g_threadFilesOpened{0};
std::atomic<uint32_t> g_sameIdFiles{0}; // thread-<tid>-<k>: k of the last one


void count(uint32_t* counter) {
    if (counter) __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

void raiseTo(std::atomic<uint64_t>& value, uint64_t to) {
    uint64_t v = value.load(std::memory_order_relaxed);
    while (v < to && !value.compare_exchange_weak(v, to, std::memory_order_release)) {
    }
}

// Maps and faults in the chunk of a thread's file that starts at slot `from` (its size:
// chunk_geometry.hpp), once its blocks are secured (file_space.hpp: a full disk is an error
// here, never a SIGBUS later); the file only grows. Raw calls only: this runs on the helper too
// (`helperReady` = the lane's ready count there, null on the thread). Returns Done, AlreadyThere
// (helper only) or a positive errno.
constexpr int kDone = 0, kAlreadyThere = -1;
int mapChunk(char* base, const char* file, uint64_t maxSlots, uint64_t from,
             const std::atomic<uint64_t>* helperReady) {
    bool onHelper = helperReady != nullptr;
    uint64_t slots = ChunkGeometry(g_chunkBytes, maxSlots).sizeAt(from);
    if (slots == 0) return EFBIG; // the record limit: reserveSlotSlow stops before this
    // A file that grows by writing zeros is grown by its own thread only: zeros written while
    // the thread (or its signal handler) records into the chunk before would overwrite records.
    if (onHelper && fileGrowsByWriting()) return EOPNOTSUPP;
    char path[1500];
    appendText(appendText(appendText(path, g_procDir), "/"), file);
    long fd = sysCall(SYS_openat, AT_FDCWD, long(path), O_RDWR | O_CLOEXEC);
    if (fd < 0) return int(-fd);
    long offset = long(raw::kHeaderSize + from * raw::kRecordSize);
    long bytes = long(slots * raw::kRecordSize);
    int err = reserveFileSpace(int(fd), uint64_t(offset), uint64_t(bytes), !onHelper);
    // The thread got there first (it outran the helper): re-mapping would only throw away the
    // page-table entries it has just faulted in.
    if (err == 0 && onHelper && helperReady->load(std::memory_order_acquire) > from) {
        sysCall(SYS_close, fd);
        return kAlreadyThere;
    }
    if (err == 0) {
        char* at = base + offset;
        long m = sysCall(SYS_mmap, long(at), bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                         fd, offset);
        if (m != long(at)) err = m < 0 ? int(-m) : EFAULT;
        // Fault the whole chunk in, writable, with one call; best effort (older kernels fault
        // lazily on first touch).
        if (err == 0) sysCall(SYS_madvise, long(at), bytes, kMadvPopulateWrite);
    }
    sysCall(SYS_close, fd);
    if (err != 0) return err;
    auto* h = reinterpret_cast<raw::ThreadFileHeader*>(base);
    uint64_t next = from + slots;
    uint64_t cap = __atomic_load_n(&h->capacity, __ATOMIC_RELAXED);
    while (cap < next && !__atomic_compare_exchange_n(&h->capacity, &cap, next, true,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return kDone;
}

// Maps, on the helper, what lane `l` asked for. The busy flag and inUse form a Dekker pair with
// releaseLane/claimLane: either the helper sees the lane leaving and backs off, or the thread
// sees the helper inside and waits before unmapping its reservation.
void serveLane(Lane& l) {
    l.helperBusy.store(1, std::memory_order_seq_cst);
    if (l.inUse.load(std::memory_order_seq_cst) == 1) {
        char* base = l.base;
        uint64_t maxSlots = l.maxSlots;
        while (!g_stop.load(std::memory_order_relaxed) &&
               l.inUse.load(std::memory_order_relaxed) == 1) {
            uint64_t from = l.ready.load(std::memory_order_acquire);
            if (from >= l.want.load(std::memory_order_acquire)) break;
            int m = mapChunk(base, l.file, maxSlots, from, &l.ready);
            if (m > 0) {
                l.want.store(from, std::memory_order_relaxed); // its thread meets the error too
                break;
            }
            if (m == kDone) count(g_chunksAhead);
            raiseTo(l.ready, from + ChunkGeometry(g_chunkBytes, maxSlots).sizeAt(from));
        }
    }
    l.helperBusy.store(0, std::memory_order_seq_cst);
    sysCall(SYS_futex, long(&l.helperBusy), FUTEX_WAKE_PRIVATE, 1);
}

// Unmaps, on the helper, the reservation of a thread that exited, and frees its lane.
void retireLane(Lane& l) {
    sysCall(SYS_munmap, long(l.base), long(l.reservationBytes));
    l.base = nullptr;
    l.ready.store(0, std::memory_order_relaxed);
    l.want.store(0, std::memory_order_relaxed);
    g_lanesRetired.fetch_sub(1, std::memory_order_relaxed);
    l.inUse.store(kLaneFree, std::memory_order_release);
}

void serveLanes() {
    int high = g_poolHigh.load(std::memory_order_acquire);
    for (int i = 0; i < high; ++i) {
        Lane& l = g_pool[i].lane;
        uint32_t state = l.inUse.load(std::memory_order_acquire);
        if (state == kLaneRetired) retireLane(l);
        if (state != kLaneOwned) continue;
        if (l.want.load(std::memory_order_acquire) <= l.ready.load(std::memory_order_acquire)) continue;
        serveLane(l);
    }
}

// Makes the next spare thread file on the helper: created, its first chunks secured, then
// published. False when none is wanted or the disk is full (the batch is dropped then: the
// threads that find none make their own, and meet the error themselves).
bool makeSpare() {
    uint32_t n = g_sparesMade.load(std::memory_order_relaxed);
    if (n >= g_sparesWanted.load(std::memory_order_acquire)) return false;
    char path[1500];
    appendSpareFilePath(path, g_procDir, int32_t(n));
    long fd =
        sysCall(SYS_openat, AT_FDCWD, long(path), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
    // Nothing maps a spare before it is published: zeros may be written where fallocate is
    // missing.
    int err = fd < 0 ? int(-fd) : reserveFileSpace(int(fd), 0, g_startBytes, true);
    if (fd >= 0) sysCall(SYS_close, fd);
    if (err != 0) {
        if (fd >= 0) sysCall(SYS_unlinkat, AT_FDCWD, long(path), 0);
        g_sparesWanted.store(n, std::memory_order_relaxed);
        return false;
    }
    g_sparesMade.store(n + 1, std::memory_order_release);
    return true;
}

int helperMain(void*) {
    // Hold none of the program's descriptors (a pipe kept open would stall whoever reads it).
    if (sysCall(kSysCloseRange, 0, long(~0u), 0) != 0)
        for (long fd = 0; fd < 65536; ++fd) sysCall(SYS_close, fd);
    while (!g_stop.load(std::memory_order_acquire)) {
        // Reparented: the program died without telling us (SIGKILL, crash).
        if (sysCall(SYS_getppid) != g_processPid) break;
        g_wake.exchange(0, std::memory_order_acq_rel);
        serveLanes();
        // One spare at a time between visits to the lanes: recording threads come first.
        while (!g_stop.load(std::memory_order_acquire) && makeSpare()) serveLanes();
        if (g_wake.load(std::memory_order_acquire) == 0 && !g_stop.load(std::memory_order_acquire)) {
            struct timespec pause = {0, kHelperPollNs};
            sysCall(SYS_futex, long(&g_wake), FUTEX_WAIT_PRIVATE, 0, long(&pause));
        }
    }
    return 0;
}

void startHelper() {
#if HPCPROF_HAVE_RAW_SYSCALL
    int expected = kNone;
    if (!g_helperState.compare_exchange_strong(expected, kStarting, std::memory_order_acq_rel)) return;
    long stack = sysCall(SYS_mmap, 0, long(kHelperStackBytes), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack < 0 && stack > -4096) {
        g_helperState.store(kRefused, std::memory_order_release);
        return;
    }
    g_helperStack = reinterpret_cast<char*>(stack);
    g_stop.store(0, std::memory_order_relaxed);
    g_wake.store(1, std::memory_order_relaxed);
    // The helper starts with every signal blocked (it inherits this thread's mask): the
    // program's handlers must never run on it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    // Its own thread pointer: a small zeroed block at the bottom of its stack mapping (self
    // pointers filled in), so that nothing on the helper ever reads the creating thread's TLS,
    // which is freed if that thread exits first. The helper's code reads no TLS at all; this
    // only guards against a compiler-inserted stack-protector check.
    auto* tcb = reinterpret_cast<void**>(g_helperStack);
    tcb[0] = tcb; // tcbhead_t.tcb
    tcb[2] = tcb; // tcbhead_t.self
    // Exit signal 0: the program gets no SIGCHLD for it, and wait()/waitpid() without __WALL
    // never report it.
    int pid = clone(helperMain, g_helperStack + kHelperStackBytes, CLONE_VM | CLONE_SETTLS, nullptr,
                    nullptr, tcb, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid <= 0) {
        sysCall(SYS_munmap, long(g_helperStack), long(kHelperStackBytes));
        g_helperStack = nullptr;
        g_helperState.store(kRefused, std::memory_order_release);
        return;
    }
    g_helperPid = pid;
    int starting = kStarting;
    if (!g_helperState.compare_exchange_strong(starting, kRunning, std::memory_order_acq_rel)) {
        // The process began to end while we started it: let the helper go at once.
        g_stop.store(1, std::memory_order_release);
        sysCall(SYS_futex, long(&g_wake), FUTEX_WAKE_PRIVATE, 1);
    }
#endif
}

// Starts the helper on first use and wakes it up.
void wakeHelper() {
    if (g_helperState.load(std::memory_order_acquire) == kNone) startHelper();
    if (g_helperState.load(std::memory_order_acquire) != kRunning) return;
    if (g_wake.exchange(1, std::memory_order_acq_rel) == 0)
        sysCall(SYS_futex, long(&g_wake), FUTEX_WAKE_PRIVATE, 1);
}

// Asks the helper to have spares made up to number `upTo`.
void wantSpares(uint32_t upTo) {
    uint32_t wanted = g_sparesWanted.load(std::memory_order_relaxed);
    while (wanted < upTo && !g_sparesWanted.compare_exchange_weak(wanted, upTo,
                                                                  std::memory_order_release)) {
    }
    if (wanted < upTo) wakeHelper();
}

// Takes the next spare, if one is ready: its number, or -1.
int32_t takeSpare() {
    uint32_t taken = g_sparesTaken.load(std::memory_order_relaxed);
    while (taken < g_sparesMade.load(std::memory_order_acquire))
        if (g_sparesTaken.compare_exchange_weak(taken, taken + 1, std::memory_order_acq_rel))
            return int32_t(taken);
    return -1;
}

} // namespace

long openThreadFile(int32_t tid, char* path, bool& secured) {
    uint32_t opened = g_threadFilesOpened.fetch_add(1, std::memory_order_relaxed);
    secured = false;
    bool spares = g_helperAllowed && opened >= kThreadFilesBeforeSpares && !fileGrowsByWriting();
    if (spares) {
        uint32_t batch = g_spareBatch.load(std::memory_order_relaxed);
        int32_t n = takeSpare();
        if (n >= 0) {
            wantSpares(uint32_t(n) + 1 + batch); // keep a batch ahead of the threads
            appendSpareFilePath(path, g_procDir, n);
            long fd = sysCall(SYS_openat, AT_FDCWD, long(path), O_RDWR | O_CLOEXEC);
            if (fd >= 0) {
                secured = true;
                return fd;
            }
        } else {
            // None asked for yet (a third thread), or threads start faster than spares are
            // made: then make more at a time.
            if (g_sparesWanted.load(std::memory_order_relaxed) > 0) {
                uint32_t bigger = batch * 2 > kMaxSpareBatch ? kMaxSpareBatch : batch * 2;
                if (g_spareBatch.compare_exchange_strong(batch, bigger, std::memory_order_relaxed))
                    batch = bigger;
            }
            wantSpares(g_sparesTaken.load(std::memory_order_relaxed) + batch);
        }
    }
    constexpr long kCreate = O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC;
    char* end = appendThreadFilePath(path, g_procDir, tid);
    long fd = sysCall(SYS_openat, AT_FDCWD, long(path), kCreate, 0644);
    for (int attempt = 0; fd == -EEXIST && attempt < 8; ++attempt) {
        uint32_t k = g_sameIdFiles.fetch_add(1, std::memory_order_relaxed) + 1;
        appendNumber(appendText(end, "-"), k);
        fd = sysCall(SYS_openat, AT_FDCWD, long(path), kCreate, 0644);
    }
    return fd;
}

void configure(const char* procDir, uint64_t chunkBytes, uint64_t startBytes, bool helperAllowed,
               uint32_t* chunksAhead, uint32_t* chunksOnThread) {
    g_procDir = procDir;
    g_startBytes = startBytes;
    g_chunksAhead = chunksAhead;
    g_chunksOnThread = chunksOnThread;
    g_chunkBytes = chunkBytes;
    g_helperAllowed = helperAllowed && HPCPROF_HAVE_RAW_SYSCALL;
    g_processPid = int(sysCall(SYS_getpid));
}

Lane* claimLane(char* base, uint64_t maxSlots, const char* file, uint64_t readySlots) {
    auto fill = [&](Lane& l, int index) {
        l.base = base;
        l.maxSlots = maxSlots;
        size_t n = 0;
        for (; file[n] && n + 1 < sizeof(l.file); ++n) l.file[n] = file[n];
        l.file[n] = 0;
        l.index = index;
        l.ready.store(readySlots, std::memory_order_relaxed);
        l.want.store(0, std::memory_order_relaxed);
        l.quietChunks = 0;
    };
    for (int i = 0; i < kPoolSize; ++i) {
        Lane& l = g_pool[i].lane;
        uint32_t freeLane = 0;
        if (l.inUse.load(std::memory_order_relaxed) != 0 ||
            !l.inUse.compare_exchange_strong(freeLane, 2, std::memory_order_seq_cst))
            continue;
        if (l.helperBusy.load(std::memory_order_seq_cst) != 0) {
            l.inUse.store(0, std::memory_order_release); // its last owner's helper visit still runs
            continue;
        }
        fill(l, i);
        l.inUse.store(1, std::memory_order_release);
        int high = g_poolHigh.load(std::memory_order_relaxed);
        while (high < i + 1 &&
               !g_poolHigh.compare_exchange_weak(high, i + 1, std::memory_order_acq_rel)) {
        }
        return &l;
    }
    // More live recording threads than the pool holds: a private lane the helper never sees.
    long page =
        sysCall(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page < 0 && page > -4096) return nullptr;
    Lane* l = new (reinterpret_cast<void*>(page)) Lane;
    fill(*l, -1);
    l->inUse.store(1, std::memory_order_relaxed);
    return l;
}

bool releaseLane(Lane* l, uint64_t reservationBytes) {
    if (!l) return false;
    if (l->index < 0) {
        sysCall(SYS_munmap, long(l), 4096);
        return false;
    }
    if (g_helperState.load(std::memory_order_acquire) == kRunning) {
        // The helper may be inside this reservation right now: it finishes that chunk, sees the
        // lane retired, and unmaps it on its next pass. (Stopped before that, at exit or exec,
        // it leaves the reservation to the end of the address space.)
        l->reservationBytes = reservationBytes;
        l->inUse.store(kLaneRetired, std::memory_order_release);
        if (g_lanesRetired.fetch_add(1, std::memory_order_relaxed) + 1 >= kRetiredBatch)
            wakeHelper();
        return true;
    }
    l->inUse.store(kLaneFree, std::memory_order_seq_cst);
    // Wait for a helper visit in progress (at most the chunk it is mapping). A helper killed
    // inside leaves the flag set: after a while it cannot be alive and mapping any more.
    int64_t deadline = monotonicNs() + kHelperGoneNs;
    while (l->helperBusy.load(std::memory_order_seq_cst) != 0 && monotonicNs() < deadline) {
        struct timespec nap = {0, 1'000'000};
        sysCall(SYS_futex, long(&l->helperBusy), FUTEX_WAIT_PRIVATE, 1, long(&nap));
    }
    l->helperBusy.store(0, std::memory_order_relaxed);
    l->want.store(0, std::memory_order_relaxed);
    return false;
}

int provideUpTo(Lane& l, uint64_t slot) {
    ChunkGeometry geometry(g_chunkBytes, l.maxSlots);
    for (;;) {
        uint64_t from = l.ready.load(std::memory_order_acquire);
        if (slot < from) return 0;
        // Not there yet (or the helper is still at it): map it here rather than wait.
        if (int err = mapChunk(l.base, l.file, l.maxSlots, from, nullptr); err != 0)
            return err;
        // Counted: full-size chunks only (the small ones of a file's start are always the
        // thread's own, the helper is never asked for them).
        uint64_t slots = geometry.sizeAt(from);
        if (slots == geometry.fullSlots()) count(g_chunksOnThread);
        // The helper had been asked for this chunk and was not done: the thread records faster
        // than the helper provides (a tight loop of cheap calls). Two mappers then only contend
        // for the same locks (mmap, the file), so the thread goes on alone for a couple of
        // chunks before it asks again.
        if (l.want.load(std::memory_order_relaxed) > from) l.quietChunks = kQuietChunksAfterOutrun;
        raiseTo(l.ready, from + slots);
    }
}

void requestAhead(Lane& l, uint64_t slots) {
    if (l.index < 0 || !g_helperAllowed || fileGrowsByWriting()) return;
    if (l.quietChunks > 0) {
        --l.quietChunks;
        return;
    }
    if (slots > l.maxSlots) slots = l.maxSlots;
    if (l.want.load(std::memory_order_relaxed) >= slots ||
        l.ready.load(std::memory_order_relaxed) >= slots)
        return;
    l.want.store(slots, std::memory_order_release);
    wakeHelper();
}

namespace {
// Takes every spare no thread took (a thread starting meanwhile makes its own file) and removes
// them. The helper is gone: none is being made.
void removeSpares() {
    uint32_t taken = g_sparesTaken.load(std::memory_order_relaxed);
    uint32_t made = g_sparesMade.load(std::memory_order_acquire);
    while (taken < made &&
           !g_sparesTaken.compare_exchange_weak(taken, made, std::memory_order_acq_rel)) {
    }
    char path[1500];
    for (uint32_t n = taken; n < made; ++n) {
        appendSpareFilePath(path, g_procDir, int32_t(n));
        sysCall(SYS_unlinkat, AT_FDCWD, long(path), 0);
    }
    g_sparesWanted.store(made, std::memory_order_relaxed);
}
} // namespace

void stopHelper() {
    int state = g_helperState.exchange(kStopped, std::memory_order_acq_rel);
    if (state == kRefused) g_helperState.store(kRefused, std::memory_order_release);
    if (state != kRunning) return;
    g_stop.store(1, std::memory_order_release);
    g_wake.store(1, std::memory_order_release);
    sysCall(SYS_futex, long(&g_wake), FUTEX_WAKE_PRIVATE, 1);
    // Reap it (it finishes at most the chunk in hand): no zombie is left to whatever this
    // process execs into.
    int status = 0;
    while (sysCall(SYS_wait4, g_helperPid, long(&status), __WCLONE, 0) == -EINTR) {
    }
    sysCall(SYS_munmap, long(g_helperStack), long(kHelperStackBytes));
    g_helperStack = nullptr;
    g_helperPid = 0;
    removeSpares();
}

void allowHelperAgain() {
    int stopped = kStopped;
    g_helperState.compare_exchange_strong(stopped, kNone, std::memory_order_acq_rel);
}

void resetAfterFork() {
    int high = g_poolHigh.load(std::memory_order_relaxed);
    for (int i = 0; i < high; ++i) {
        Lane& l = g_pool[i].lane;
        // Reservations of exited threads the parent's helper had not unmapped yet were copied
        // into this process: nothing refers to them here. (Those of the parent's live threads
        // are left alone: the forking thread's own is unmapped when it first records here.)
        if (l.inUse.load(std::memory_order_relaxed) == kLaneRetired)
            sysCall(SYS_munmap, long(l.base), long(l.reservationBytes));
        l.helperBusy.store(0, std::memory_order_relaxed);
        l.inUse.store(0, std::memory_order_relaxed);
        l.base = nullptr;
        l.ready.store(0, std::memory_order_relaxed);
        l.want.store(0, std::memory_order_relaxed);
    }
    g_poolHigh.store(0, std::memory_order_relaxed);
    g_lanesRetired.store(0, std::memory_order_relaxed);
    // The counters still point into the parent's (shared) header until configure() runs again.
    g_chunksAhead = nullptr;
    g_chunksOnThread = nullptr;
    if (g_helperStack) sysCall(SYS_munmap, long(g_helperStack), long(kHelperStackBytes));
    g_helperStack = nullptr;
    g_helperPid = 0;
    g_stop.store(0, std::memory_order_relaxed);
    g_wake.store(0, std::memory_order_relaxed);
    g_helperState.store(kNone, std::memory_order_relaxed);
    g_processPid = int(sysCall(SYS_getpid));
    // The parent's spares are in the parent's folder; this process starts its own count.
    g_sparesMade.store(0, std::memory_order_relaxed);
    g_sparesTaken.store(0, std::memory_order_relaxed);
    g_sparesWanted.store(0, std::memory_order_relaxed);
    g_spareBatch.store(kFirstSpareBatch, std::memory_order_relaxed);
    g_threadFilesOpened.store(0, std::memory_order_relaxed);
}

} // namespace hpcprof::agent::provision
