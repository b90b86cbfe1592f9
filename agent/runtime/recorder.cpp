// SPDX-License-Identifier: MIT
// Process start-up, per-thread raw files, string interning, fork and exit handling.
#include "recorder.hpp"

#include "polling_state.hpp"

#include <pthread.h>
#include <sys/utsname.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>

#include "chunk_geometry.hpp"
#include "file_space.hpp"
#include "hpcprof/launch/rank_identity.hpp"
#include "provisioner.hpp"
#include "raw_syscall.hpp"
#include "syscalls.hpp"
#include "text_append.hpp"

namespace hpcprof::agent {

namespace raw = schema::raw;

namespace detail {
uint32_t g_generation = 1; // bumped in a forked child; thread state of older generations is stale
thread_local ThreadState t_thread;
thread_local schema::raw::InFlightCall* t_pollingLine = nullptr; // polling_state.hpp
int g_state = 0;
uint32_t g_sources = ~0u;
int64_t g_clockSkewTicks = 0;
} // namespace detail

namespace {

Config g_config;
constexpr uint64_t kChunksAhead = 2; // chunks the provisioning helper keeps ready past the current
raw::ProcessHeader* g_header = nullptr;
char g_procDir[1400];
char g_cwd[4096];       // the working directory the process started in (format 5)
size_t g_cwdLength = 0;
constexpr uint32_t kCwdClaimed = ~0u; // cwdStringId while one thread is interning it
pthread_key_t g_threadKey;
int64_t g_clockSkewNs = 0;

raw::ClockPair skewedClockPair() {
    raw::ClockPair p = readClockPair();
    p.ticks += uint64_t(detail::g_clockSkewTicks);
    p.monotonicNs += g_clockSkewNs;
    p.realtimeNs += g_clockSkewNs;
    return p;
}

// Seqlock write of the latest calibration pair; the store discards a pair caught mid-write.
void refreshLastClockPair() {
    if (!g_header) return;
    raw::ClockPair p = skewedClockPair();
    __atomic_fetch_add(&g_header->lastSeq, 1, __ATOMIC_ACQ_REL);
    g_header->last = p;
    __atomic_fetch_add(&g_header->lastSeq, 1, __ATOMIC_ACQ_REL);
}

raw::ThreadFileHeader* headerOf(const detail::ThreadState& t) {
    return reinterpret_cast<raw::ThreadFileHeader*>(t.base);
}

// Counts one record the calling thread could not record: in its own file's header when it has
// one (no cache line shared with other threads), else in the process header. Async-signal-safe.
void countDrop(detail::ThreadState& t, raw::DropReason reason) {
    if (t.base && t.generation == detail::g_generation) {
        __atomic_fetch_add(&headerOf(t)->dropped[uint32_t(reason)], 1, __ATOMIC_RELAXED);
        return;
    }
    if (!g_header) return;
    uint64_t none = 0;
    if (raw::stopsThread(reason))
        __atomic_compare_exchange_n(&g_header->firstDropWithoutFileTicks, &none, now(), false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_header->droppedWithoutFile[uint32_t(reason)], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_header->droppedRecords, 1, __ATOMIC_RELAXED);
}

// The calling thread records nothing more from here (`reason` stops it, raw::stopsThread; `err`:
// the errno of the file operation that failed, 0 for the buffer limit). Its header, whose blocks
// exist, says when and why; the record that met the problem is counted. Async-signal-safe.
void stopRecording(detail::ThreadState& t, raw::DropReason reason, int err) {
    if (!t.failed) {
        t.failed = true;
        t.stopReason = uint8_t(reason);
        if (t.base) {
            raw::ThreadFileHeader* h = headerOf(t);
            h->stopReason = uint32_t(reason);
            h->stopErrno = err;
            __atomic_store_n(&h->stoppedTicks, now(), __ATOMIC_RELEASE);
        }
    }
    countDrop(t, raw::DropReason(t.stopReason));
}

void readFileInto(const char* path, char* buf, size_t cap, uint32_t* lengthOut) {
    buf[0] = 0;
    int fd = sys::open(path, O_RDONLY);
    if (fd < 0) return;
    ssize_t n = sys::read(fd, buf, cap - 1);
    sys::close(fd);
    if (n < 0) n = 0;
    buf[n] = 0;
    if (lengthOut) *lengthOut = uint32_t(n);
}

// Who the process is: rank, host, executable, command line, working directory; a forked child
// takes them from its parent.
void fillIdentity(raw::ProcessHeader* h, const raw::ProcessHeader* parent) {
    if (parent) {
        // A forked child: same executable and command, not a rank, string ids continue after the
        // parent's so ids inherited through the descriptor table still resolve (via the parent).
        h->rank = -1;
        h->worldSize = parent->worldSize;
        h->localRank = -1;
        std::strcpy(h->rankSource, "fork");
        h->nextStringId = __atomic_load_n(&parent->nextStringId, __ATOMIC_RELAXED);
        h->parentStartValid = 1;
        h->parentStartNs = parent->start.monotonicNs - g_clockSkewNs;
        std::memcpy(h->host, parent->host, sizeof(h->host));
        std::memcpy(h->exe, parent->exe, sizeof(h->exe));
        std::memcpy(h->cmdline, parent->cmdline, sizeof(h->cmdline));
        h->cmdlineLength = parent->cmdlineLength;
        // The child reports the folder its parent started in: an id the parent has interned
        // resolves through the parent's strings; otherwise the child interns it (g_cwd is the
        // parent's, copied by fork).
        uint32_t cwd = __atomic_load_n(&parent->cwdStringId, __ATOMIC_ACQUIRE);
        h->cwdStringId = cwd == kCwdClaimed ? 0 : cwd;
    } else {
        RankIdentity id = rankFromEnvironment();
        h->rank = id.rank;
        h->worldSize = id.worldSize;
        h->localRank = id.localRank;
        std::strncpy(h->rankSource, id.source, sizeof(h->rankSource) - 1);
        h->nextStringId = 1;
        struct utsname u;
        if (uname(&u) == 0) std::memcpy(h->host, u.nodename, std::min(sizeof(h->host) - 1, std::strlen(u.nodename)));
        ssize_t n = sys::readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);
        h->exe[n > 0 ? n : 0] = 0;
        readFileInto("/proc/self/cmdline", h->cmdline, sizeof(h->cmdline), &h->cmdlineLength);
        ssize_t c = sys::readlink("/proc/self/cwd", g_cwd, sizeof(g_cwd));
        g_cwdLength = c > 0 && size_t(c) < sizeof(g_cwd) ? size_t(c) : 0;
    }
}

// Creates proc-<pid>-<start_ns>/process.bin and maps it. Returns false if the raw directory is
// unusable; the process then runs unrecorded.
bool createProcessFolder(const raw::ProcessHeader* parent) {
    raw::ClockPair start = skewedClockPair();
    int pid = int(getpid());
    char* p = appendText(g_procDir, g_config.rawDir);
    p = appendText(p, "/proc-");
    p = appendNumber(p, pid);
    p = appendText(p, "-");
    p = appendNumber(p, start.monotonicNs);
    if (sys::mkdir(g_procDir, 0755) != 0) return false;

    char path[1500];
    appendText(appendText(appendText(path, g_procDir), "/"), "process.bin");
    int fd = sys::open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    // Blocks first (file_space.hpp): on a full disk the process runs unrecorded, and the empty
    // process.bin left behind tells the store this process existed.
    if (reserveFileSpace(fd, 0, sizeof(raw::ProcessHeader)) != 0) {
        sys::close(fd);
        return false;
    }
    void* m = mmap(nullptr, sizeof(raw::ProcessHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    sys::close(fd);
    if (m == MAP_FAILED) return false;

    auto* h = static_cast<raw::ProcessHeader*>(m);
    h->version = raw::kFormatVersion;
    h->recordSize = raw::kRecordSize;
    h->pid = pid;
    h->ppid = int(getppid());
    h->clockKind = detail::g_useTsc ? raw::ClockKind::Tsc : raw::ClockKind::Monotonic;
    h->start = start;
    h->last = start;
    h->tscHz = g_config.tscHz;
    h->endState = raw::EndState::Running;
    h->exitCode = -1;
    h->endMonotonicNs = start.monotonicNs;
    fillIdentity(h, parent);
    // The magic goes last: the store ignores a header that never finished initialising.
    __atomic_store_n(&h->magic, raw::kProcessMagic, __ATOMIC_RELEASE);
    g_header = h;
    return true;
}

void onThreadExit(void*) {
    detail::ThreadState& t = detail::t_thread;
    if (t.base && t.generation == detail::g_generation) {
        uint64_t span = raw::kHeaderSize + t.maxSlots * raw::kRecordSize;
        // The helper unmaps the reservation later, or the lane waits for a chunk the helper is
        // mapping into it and we unmap it here.
        if (!provision::releaseLane(t.lane, span)) munmap(t.base, span);
        t.lane = nullptr;
        t.base = nullptr;
        // Late events of this thread (other libraries' thread-exit handlers) are dropped.
        t.failed = true;
        t.stopReason = uint8_t(raw::DropReason::AfterThreadExit);
    }
}

// Return from main (or exit() after its hook already set the code): keep the code if known.
void onExit() {
    if (g_header && g_header->endState != raw::EndState::Running)
        markEnd(g_header->endState, g_header->exitCode);
    else
        markEnd(raw::EndState::Exited, -1);
}

// What a new thread file starts with: its header and first two chunks (initThread).
uint64_t threadFileStartBytes() {
    ChunkGeometry geometry(g_config.chunkBytes, g_config.threadBufferBytes / raw::kRecordSize);
    return raw::kHeaderSize + geometry.endOf(geometry.firstSlots()) * raw::kRecordSize;
}

void configureProvisioning() {
    provision::configure(g_procDir, g_config.chunkBytes, threadFileStartBytes(),
                         g_config.provisionHelper, &g_header->chunksAhead,
                         &g_header->chunksOnThread);
}

void onForkChild() {
    raw::ProcessHeader* parent = g_header;
    detail::g_generation++;
    g_header = nullptr;
    provision::resetAfterFork();
    if (!parent || !createProcessFolder(parent)) {
        __atomic_store_n(&detail::g_state, 3, __ATOMIC_RELEASE);
        return;
    }
    // The parent's header mapping is shared with the parent: drop our view of it.
    munmap(parent, sizeof(raw::ProcessHeader));
    configureProvisioning();
}

// The thread gets no file (`err`: why): its records are counted in the process header.
bool threadWithoutFile(detail::ThreadState& t, int err) {
    t.stopReason = uint8_t(dropReasonFor(err));
    if (g_header) __atomic_fetch_add(&g_header->threadsWithoutFile, 1, __ATOMIC_RELAXED);
    return false;
}

// Interns the working directory into the process's strings once, from the first thread that
// gets a file (so that a process that never records costs no string), and names it in the
// header. The diff matches files by their path relative to it.
void recordWorkingDirectory() {
    uint32_t none = 0;
    if (!g_header || g_cwdLength == 0 ||
        !__atomic_compare_exchange_n(&g_header->cwdStringId, &none, kCwdClaimed, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return;
    uint32_t id = internString(g_cwd, g_cwdLength);
    __atomic_store_n(&g_header->cwdStringId, id, __ATOMIC_RELEASE);
}

// Creates the thread's file with its header and first two chunks (a page of records each: an
// idle thread costs three pages on disk), maps them at the start of the thread's reservation and
// claims its provisioning lane. Later chunks double up to HPCPROF_CHUNK_KB (chunk_geometry.hpp),
// each mapped while the thread still fills the one before (reserveSlotSlow).
bool initThread(detail::ThreadState& t) {
    if (t.base) munmap(t.base, raw::kHeaderSize + t.maxSlots * raw::kRecordSize); // forked child
    t = detail::ThreadState{};
    t.generation = detail::g_generation;
    t.tid = int32_t(sys::gettid());
    t.maxSlots = g_config.threadBufferBytes / raw::kRecordSize;
    t.failed = true;
    size_t span = raw::kHeaderSize + t.maxSlots * raw::kRecordSize;
    void* region = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return threadWithoutFile(t, errno);

    uint64_t firstSlots = ChunkGeometry(g_config.chunkBytes, t.maxSlots).firstSlots();
    size_t initialBytes = threadFileStartBytes(); // the first chunk and the one after it
    uint64_t readySlots = (initialBytes - raw::kHeaderSize) / raw::kRecordSize;
    char path[1500];
    bool secured = false; // a spare file made ahead has its space secured already
    long fd = provision::openThreadFile(t.tid, path, secured);
    int err = fd < 0 ? int(-fd) : secured ? 0 : reserveFileSpace(int(fd), 0, initialBytes);
    if (err == 0 && mmap(region, initialBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                         int(fd), 0) != region)
        err = errno;
    if (fd >= 0) sys::close(int(fd));
    provision::Lane* lane = nullptr;
    if (err == 0) {
        t.base = static_cast<char*>(region);
        const char* file = path + std::strlen(g_procDir) + 1; // its name in the process folder
        lane = provision::claimLane(t.base, t.maxSlots, file, readySlots);
        if (!lane) err = ENOMEM;
    }
    if (err != 0) {
        // No half-made file: the store would read it as damaged. The loss is counted instead.
        if (fd >= 0) sysCall(SYS_unlinkat, AT_FDCWD, long(path), 0);
        munmap(region, span);
        t.base = nullptr;
        return threadWithoutFile(t, err);
    }
    auto* h = headerOf(t);
    h->version = raw::kFormatVersion;
    h->recordSize = raw::kRecordSize;
    h->pid = int32_t(getpid());
    h->tid = t.tid;
    h->capacity = readySlots;
    pthread_getname_np(pthread_self(), h->threadName, sizeof(h->threadName));
    t.lane = lane;
    t.mapped = firstSlots;
    refreshLastClockPair();
    __atomic_store_n(&h->magic, raw::kThreadMagic, __ATOMIC_RELEASE);
    t.failed = false;
    pthread_setspecific(g_threadKey, &t);
    recordWorkingDirectory();
    return true;
}

} // namespace

namespace detail {

char* reserveSlotSlow(uint64_t slot) {
    ThreadState& t = detail::t_thread;
    if (slot == kNoSlot) {
        // First event of this thread in this process, or the thread is not recording.
        if (t.generation != g_generation) {
            int savedErrno = errno;
            bool ok = initThread(t);
            errno = savedErrno;
            if (ok) return reserveSlot();
        }
        countDrop(t, raw::DropReason(t.stopReason));
        return nullptr;
    }
    if (slot >= t.maxSlots) {
        stopRecording(t, raw::DropReason::BufferLimit, 0);
        return nullptr;
    }
    if (t.growing) {
        // A signal handler that interrupted this thread's growth: only the outermost context
        // maps. The slot is usable if already mapped (the usual case: the thread was only asking
        // the helper for more); if not, the handler's record is dropped and its slot handed back
        // (the interrupted thread resumes only after the handler, so nothing else took a slot
        // since), leaving no empty slot that would read as a torn record.
        if (slot < t.lane->ready.load(std::memory_order_acquire))
            return t.base + raw::kHeaderSize + slot * raw::kRecordSize;
        if (t.next == slot + 1) t.next = slot;
        countDrop(t, raw::DropReason::SignalWhileGrowing);
        return nullptr;
    }
    t.growing = true;
    int savedErrno = errno; // hooks rely on errno surviving the recording path
    int err = provision::provideUpTo(*t.lane, slot);
    if (err == 0) {
        // Come back at the end of this chunk. Once the file's chunks reach their full size, ask
        // the helper for the chunks after this one, so that they are mapped by the time the
        // thread gets there (two: a margin for the helper's scheduling delays on a busy
        // machine). A thread that records less than about half a full chunk never starts the
        // helper.
        ChunkGeometry geometry(g_config.chunkBytes, t.maxSlots);
        uint64_t chunkEnd = geometry.endOf(slot);
        if (chunkEnd >= geometry.fullSlots())
            provision::requestAhead(*t.lane, chunkEnd + kChunksAhead * geometry.fullSlots());
        else
            // The small chunks of a file's start: the thread maps the next one now, so that the
            // one it is about to fill is always there already (a signal handler recording
            // meanwhile then finds its slot mapped). A failure here is met again, and counted,
            // when the thread gets there.
            provision::provideUpTo(*t.lane, chunkEnd);
        t.mapped = chunkEnd;
        __atomic_store_n(&headerOf(t)->reserved, t.next, __ATOMIC_RELAXED);
        refreshLastClockPair();
    }
    t.growing = false;
    if (err != 0) {
        // Nothing past the mapped chunks may be touched (a full disk would SIGBUS the program):
        // this thread stops recording here.
        stopRecording(t, dropReasonFor(err), err);
    }
    errno = savedErrno;
    if (err != 0) return nullptr;
    return t.base + raw::kHeaderSize + slot * raw::kRecordSize;
}

} // namespace detail

schema::raw::InFlightCall* inFlightLineSlow() {
    detail::ThreadState& t = detail::t_thread;
    if (t.generation != detail::g_generation) {
        if (__atomic_load_n(&detail::g_state, __ATOMIC_ACQUIRE) != 2) return nullptr;
        int savedErrno = errno;
        initThread(t); // a thread whose first call hangs still shows it
        errno = savedErrno;
    }
    if (!t.base || t.generation != detail::g_generation) return nullptr;
    return &headerOf(t)->inFlight;
}

void ensureStarted() {
    int expected = 0;
    if (!__atomic_compare_exchange_n(&detail::g_state, &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; // started, starting on another thread, or passive
    g_config = readConfig();
    if (!g_config.enabled) {
        __atomic_store_n(&detail::g_state, 3, __ATOMIC_RELEASE);
        return;
    }
    raw::ClockKind kind = selectClock(g_config.clockRequest);
    g_clockSkewNs = g_config.clockSkewNs;
    if (g_clockSkewNs != 0) {
        double ticksPerNs = (kind == raw::ClockKind::Tsc && g_config.tscHz) ? g_config.tscHz / 1e9 : 1.0;
        detail::g_clockSkewTicks = int64_t(double(g_clockSkewNs) * ticksPerNs);
    }
    detail::g_sources = g_config.sources;
    if (!createProcessFolder(nullptr)) {
        __atomic_store_n(&detail::g_state, 3, __ATOMIC_RELEASE);
        return;
    }
    configureProvisioning();
    pthread_key_create(&g_threadKey, onThreadExit);
    pthread_atfork(nullptr, nullptr, onForkChild);
    std::atexit(onExit);
    __atomic_store_n(&detail::g_state, 2, __ATOMIC_RELEASE);
}


uint32_t internString(const char* text, size_t len) {
    if (!g_header) return 0;
    uint32_t id = uint32_t(__atomic_fetch_add(&g_header->nextStringId, 1, __ATOMIC_RELAXED));
    size_t done = 0;
    do {
        auto* r = reinterpret_cast<raw::StringRecord*>(reserveSlot());
        if (!r) return 0; // an incomplete string is reported as unknown by the store
        size_t piece = len - done < raw::kStringPieceSize ? len - done : raw::kStringPieceSize;
        r->id = id;
        r->length = uint16_t(piece);
        std::memcpy(r->text, text + done, piece);
        done += piece;
        r->last = done == len;
        r->kind.store(raw::RecordKind::String, std::memory_order_release);
    } while (done < len);
    return id;
}

void setRank(int rank, int worldSize, const char* source) {
    if (!g_header) return;
    g_header->rank = rank;
    g_header->worldSize = worldSize;
    std::strncpy(g_header->rankSource, source, sizeof(g_header->rankSource) - 1);
}

void markEnd(raw::EndState state, int exitCode) {
    if (!g_header) return;
    // A vfork child (exec or _exit) runs in its parent's memory: the header is the parent's.
    if (g_header->pid != int(getpid())) return;
    // An MPI_Abort is the story of this process's end, whatever exit path the library takes
    // afterwards (Open MPI leaves through _exit).
    if (__atomic_load_n(&g_header->endState, __ATOMIC_ACQUIRE) == raw::EndState::Aborted) return;
    if (state == raw::EndState::Running)
        provision::allowHelperAgain(); // an exec failed: the process goes on
    else
        provision::stopHelper();
    refreshLastClockPair();
    g_header->exitCode = exitCode;
    g_header->endMonotonicNs = monotonicNs() + g_clockSkewNs;
    __atomic_store_n(&g_header->endState, state, __ATOMIC_RELEASE);
}

int64_t localNs() { return monotonicNs() + g_clockSkewNs; }

void recordClockSync(int which, int64_t local, int64_t offsetNs, int64_t rttNs) {
    if (!g_header) return;
    raw::ClockSync& s = which == 0 ? g_header->syncInit : g_header->syncFinal;
    s.localNs = local;
    s.offsetNs = offsetNs;
    s.rttNs = rttNs;
    __atomic_store_n(&s.valid, 1u, __ATOMIC_RELEASE);
}

void countUnresolvedHook() {
    if (g_header) __atomic_fetch_add(&g_header->hooksUnresolved, 1, __ATOMIC_RELAXED);
}

} // namespace hpcprof::agent
