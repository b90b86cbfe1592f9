// SPDX-License-Identifier: MIT
// Chunk provisioning for thread raw files, on the recording thread or ahead of it on a helper
// task (see provisioner.hpp for why a clone(CLONE_VM) task and what it may not do).
#include "provisioner.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "clock.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "raw_syscall.hpp"
#include "text_append.hpp"

namespace hpcprof::collector::provision {

namespace raw = schema::raw;

namespace {

constexpr int kMadvPopulateWrite = 23; // MADV_POPULATE_WRITE (Linux 5.14), absent from old headers
constexpr long kSysCloseRange = 436;   // close_range (Linux 5.9)
constexpr int kPoolSize = 4096;
constexpr size_t kHelperStackBytes = 64 * 1024;
constexpr long kHelperPollNs = 100'000'000; // how often an idle helper checks its parent is alive
constexpr int64_t kLockStealNs = 2'000'000'000; // a lane lock held this long: its holder died

struct alignas(64) PoolEntry {
    Lane lane;
};
PoolEntry g_pool[kPoolSize];
std::atomic<int> g_poolHigh{0}; // lanes [0, high) have been handed out at least once

const char* g_procDir = "";
uint64_t g_chunkBytes = 1 << 20;
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

// One system call, -errno on failure. Raw where we have it: the helper must not touch errno.
long sysc(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
#if HPCPROF_HAVE_RAW_SYSCALL
    return rawsys::call(nr, a, b, c, d, e, f);
#else
    long r = ::syscall(nr, a, b, c, d, e, f);
    return r == -1 ? -errno : r;
#endif
}

bool tryLock(Lane& l) {
    uint32_t unlocked = 0;
    return l.lock.compare_exchange_strong(unlocked, 1, std::memory_order_acquire);
}
// Wakes a thread sleeping in lockWaiting (one system call per chunk, not per record).
void unlock(Lane& l) {
    l.lock.store(0, std::memory_order_release);
    sysc(SYS_futex, long(&l.lock), FUTEX_WAKE_PRIVATE, 1);
}

// Thread side: sleeps until the helper has finished the chunk in hand (it usually is the one the
// thread needs). A lock held for seconds means the helper was killed mid-chunk, and taking over
// is safe (re-mapping the same file range at the same address shows the same pages).
void lockWaiting(Lane& l) {
    if (tryLock(l)) return;
    int64_t deadline = monotonicNs() + kLockStealNs;
    while (!tryLock(l)) {
        if (monotonicNs() > deadline) {
            l.lock.store(1, std::memory_order_seq_cst);
            return;
        }
        struct timespec nap = {0, 10'000'000};
        sysc(SYS_futex, long(&l.lock), FUTEX_WAIT_PRIVATE, 1, long(&nap));
    }
}

void count(uint32_t* counter) {
    if (counter) __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

// Maps and faults in the next chunk of `l`'s file. Caller holds l.lock. Raw calls only: this
// runs on the helper too.
bool growChunk(Lane& l, uint32_t* counter) {
    uint64_t chunkSlots = g_chunkBytes / raw::kRecordSize;
    uint64_t have = l.ready.load(std::memory_order_relaxed);
    uint64_t next = have + chunkSlots;
    if (next > l.maxSlots) return false;
    char path[1500];
    appendThreadFilePath(path, g_procDir, l.tid);
    long fd = sysc(SYS_openat, AT_FDCWD, long(path), O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    long offset = long(raw::kHeaderSize + have * raw::kRecordSize);
    bool ok = sysc(SYS_ftruncate, fd, long(raw::kHeaderSize + next * raw::kRecordSize)) == 0;
    if (ok) {
        char* at = l.base + offset;
        ok = sysc(SYS_mmap, long(at), long(g_chunkBytes), PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_FIXED, fd, offset) == long(at);
        // Fault the whole chunk in, writable, with one call; best effort (older kernels fault
        // lazily on first touch).
        if (ok) sysc(SYS_madvise, long(at), long(g_chunkBytes), kMadvPopulateWrite);
    }
    sysc(SYS_close, fd);
    if (!ok) return false;
    auto* h = reinterpret_cast<raw::ThreadFileHeader*>(l.base);
    __atomic_store_n(&h->capacity, next, __ATOMIC_RELAXED);
    l.ready.store(next, std::memory_order_release);
    count(counter);
    return true;
}

// Serves every lane that asked for more, under its lock. A lane whose file cannot grow is not
// retried: its thread meets the same failure itself and counts the drops.
void serveLanes() {
    int high = g_poolHigh.load(std::memory_order_acquire);
    for (int i = 0; i < high; ++i) {
        Lane& l = g_pool[i].lane;
        if (!l.inUse.load(std::memory_order_acquire)) continue;
        if (l.want.load(std::memory_order_acquire) <= l.ready.load(std::memory_order_acquire)) continue;
        // One chunk per turn under the lock, so the thread never waits for more than the chunk
        // it may need.
        while (l.inUse.load(std::memory_order_acquire) && !g_stop.load(std::memory_order_relaxed) &&
               l.ready.load(std::memory_order_acquire) < l.want.load(std::memory_order_acquire)) {
            if (!tryLock(l)) break; // its thread is mapping for itself right now
            bool grown = l.inUse.load(std::memory_order_relaxed) &&
                         l.ready.load(std::memory_order_relaxed) < l.want.load(std::memory_order_acquire) &&
                         growChunk(l, g_chunksAhead);
            if (!grown && l.inUse.load(std::memory_order_relaxed))
                l.want.store(l.ready.load(std::memory_order_relaxed), std::memory_order_relaxed);
            unlock(l);
            if (!grown) break;
        }
    }
}

int helperMain(void*) {
    // Hold none of the program's descriptors (a pipe kept open would stall whoever reads it).
    if (sysc(kSysCloseRange, 0, long(~0u), 0) != 0)
        for (long fd = 0; fd < 65536; ++fd) sysc(SYS_close, fd);
    while (!g_stop.load(std::memory_order_acquire)) {
        // Reparented: the program died without telling us (SIGKILL, crash).
        if (sysc(SYS_getppid) != g_processPid) break;
        g_wake.exchange(0, std::memory_order_acq_rel);
        serveLanes();
        if (g_wake.load(std::memory_order_acquire) == 0 && !g_stop.load(std::memory_order_acquire)) {
            struct timespec pause = {0, kHelperPollNs};
            sysc(SYS_futex, long(&g_wake), FUTEX_WAIT_PRIVATE, 0, long(&pause));
        }
    }
    return 0;
}

void startHelper() {
#if HPCPROF_HAVE_RAW_SYSCALL
    int expected = kNone;
    if (!g_helperState.compare_exchange_strong(expected, kStarting, std::memory_order_acq_rel)) return;
    long stack = sysc(SYS_mmap, 0, long(kHelperStackBytes), PROT_READ | PROT_WRITE,
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
    // Exit signal 0: the program gets no SIGCHLD for it, and wait()/waitpid() without __WALL
    // never report it.
    int pid = clone(helperMain, g_helperStack + kHelperStackBytes, CLONE_VM, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid <= 0) {
        sysc(SYS_munmap, long(g_helperStack), long(kHelperStackBytes));
        g_helperStack = nullptr;
        g_helperState.store(kRefused, std::memory_order_release);
        return;
    }
    g_helperPid = pid;
    int starting = kStarting;
    if (!g_helperState.compare_exchange_strong(starting, kRunning, std::memory_order_acq_rel)) {
        // The process began to end while we started it: let the helper go at once.
        g_stop.store(1, std::memory_order_release);
        sysc(SYS_futex, long(&g_wake), FUTEX_WAKE_PRIVATE, 1);
    }
#endif
}

} // namespace

void configure(const char* procDir, uint64_t chunkBytes, bool helperAllowed,
               uint32_t* chunksAhead, uint32_t* chunksOnThread) {
    g_procDir = procDir;
    g_chunksAhead = chunksAhead;
    g_chunksOnThread = chunksOnThread;
    g_chunkBytes = chunkBytes;
    g_helperAllowed = helperAllowed && HPCPROF_HAVE_RAW_SYSCALL;
    g_processPid = int(sysc(SYS_getpid));
}

Lane* claimLane(char* base, uint64_t maxSlots, int32_t tid) {
    auto fill = [&](Lane& l, int index) {
        l.base = base;
        l.maxSlots = maxSlots;
        l.tid = tid;
        l.index = index;
        l.ready.store(0, std::memory_order_relaxed);
        l.want.store(0, std::memory_order_relaxed);
    };
    for (int i = 0; i < kPoolSize; ++i) {
        Lane& l = g_pool[i].lane;
        if (l.inUse.load(std::memory_order_relaxed) || !tryLock(l)) continue;
        if (l.inUse.load(std::memory_order_relaxed)) {
            unlock(l);
            continue;
        }
        fill(l, i);
        l.inUse.store(1, std::memory_order_release);
        unlock(l);
        int high = g_poolHigh.load(std::memory_order_relaxed);
        while (high < i + 1 &&
               !g_poolHigh.compare_exchange_weak(high, i + 1, std::memory_order_acq_rel)) {
        }
        return &l;
    }
    // More live recording threads than the pool holds: a private lane the helper never sees.
    long page = sysc(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page < 0 && page > -4096) return nullptr;
    Lane* l = new (reinterpret_cast<void*>(page)) Lane;
    fill(*l, -1);
    l->inUse.store(1, std::memory_order_relaxed);
    return l;
}

void releaseLane(Lane* l) {
    if (!l) return;
    if (l->index < 0) {
        sysc(SYS_munmap, long(l), 4096);
        return;
    }
    lockWaiting(*l);
    l->inUse.store(0, std::memory_order_relaxed);
    l->base = nullptr;
    l->want.store(0, std::memory_order_relaxed);
    unlock(*l);
}

bool provideUpTo(Lane& l, uint64_t slot) {
    if (slot < l.ready.load(std::memory_order_acquire)) return true;
    lockWaiting(l);
    bool ok = true;
    while (ok && slot >= l.ready.load(std::memory_order_relaxed)) ok = growChunk(l, g_chunksOnThread);
    unlock(l);
    return ok;
}

void requestAhead(Lane& l, uint64_t slots) {
    if (l.index < 0 || !g_helperAllowed) return;
    if (slots > l.maxSlots) slots = l.maxSlots;
    if (l.want.load(std::memory_order_relaxed) >= slots ||
        l.ready.load(std::memory_order_relaxed) >= slots)
        return;
    l.want.store(slots, std::memory_order_release);
    if (g_helperState.load(std::memory_order_acquire) == kNone) startHelper();
    if (g_helperState.load(std::memory_order_acquire) != kRunning) return;
    if (g_wake.exchange(1, std::memory_order_acq_rel) == 0)
        sysc(SYS_futex, long(&g_wake), FUTEX_WAKE_PRIVATE, 1);
}

void stopHelper() {
    if (sysc(SYS_getpid) != g_processPid) return; // a vfork child: the helper is its parent's
    int state = g_helperState.exchange(kStopped, std::memory_order_acq_rel);
    if (state == kRefused) g_helperState.store(kRefused, std::memory_order_release);
    if (state != kRunning) return;
    g_stop.store(1, std::memory_order_release);
    g_wake.store(1, std::memory_order_release);
    sysc(SYS_futex, long(&g_wake), FUTEX_WAKE_PRIVATE, 1);
    // Reap it (it finishes at most the chunk in hand): no zombie is left to whatever this
    // process execs into.
    int status = 0;
    sysc(SYS_wait4, g_helperPid, long(&status), __WCLONE, 0);
    sysc(SYS_munmap, long(g_helperStack), long(kHelperStackBytes));
    g_helperStack = nullptr;
    g_helperPid = 0;
}

void allowHelperAgain() {
    if (sysc(SYS_getpid) != g_processPid) return;
    int stopped = kStopped;
    g_helperState.compare_exchange_strong(stopped, kNone, std::memory_order_acq_rel);
}

void resetAfterFork() {
    int high = g_poolHigh.load(std::memory_order_relaxed);
    for (int i = 0; i < high; ++i) {
        Lane& l = g_pool[i].lane;
        l.lock.store(0, std::memory_order_relaxed);
        l.inUse.store(0, std::memory_order_relaxed);
        l.base = nullptr;
        l.ready.store(0, std::memory_order_relaxed);
        l.want.store(0, std::memory_order_relaxed);
    }
    g_poolHigh.store(0, std::memory_order_relaxed);
    // The counters still point into the parent's (shared) header until configure() runs again.
    g_chunksAhead = nullptr;
    g_chunksOnThread = nullptr;
    if (g_helperStack) sysc(SYS_munmap, long(g_helperStack), long(kHelperStackBytes));
    g_helperStack = nullptr;
    g_helperPid = 0;
    g_stop.store(0, std::memory_order_relaxed);
    g_wake.store(0, std::memory_order_relaxed);
    g_helperState.store(kNone, std::memory_order_relaxed);
    g_processPid = int(sysc(SYS_getpid));
}

} // namespace hpcprof::collector::provision
