// SPDX-License-Identifier: MIT
#include "sampler.hpp"

#include <dirent.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "boundary.hpp"
#include "own_descriptor_table.hpp"
#include "papi_backend.hpp"
#include "perf_backend.hpp"
#include "proc_backends.hpp"
#include "runtime/recorder.hpp"
#include "runtime/syscalls.hpp"

extern "C" {
__attribute__((visibility("default"))) uint32_t hpcprof_counters_boundaries = 0;
// glibc 2.32+: nonzero while the process has never started a second thread. Weak: with an older
// C library the process is taken as multi-threaded.
extern char __libc_single_threaded __attribute__((weak));
}

namespace hpcprof::agent::counters {
namespace {
void startSamplerThread();
std::atomic<bool> g_threadPending{false}; // the sampler thread waits for the program's first thread
} // namespace
} // namespace hpcprof::agent::counters

extern "C" __attribute__((visibility("default"))) void hpcprof_counters_thread_starting() {
    using namespace hpcprof::agent::counters;
    if (g_threadPending.load(std::memory_order_acquire) && g_threadPending.exchange(false))
        startSamplerThread();
}

namespace hpcprof::agent::counters {

thread_local bool t_ownDescriptorTable __attribute__((tls_model("initial-exec"))) = false;

namespace raw = schema::raw;

namespace {

constexpr int kMaxThreads = 256; // per process
/// How long exit() waits for the sampler thread's last samples before it takes, itself, what
/// needs no descriptor.
constexpr int64_t kExitWaitNs = 500'000'000;
/// Listing /proc/self/task costs more than sampling a thread: new threads are looked for every
/// this many periods.
constexpr uint64_t kDiscoverEvery = 10;
/// Backends that parse /proc text (context switches, faults: rates over seconds, not ms) are
/// read on this many periods' ticks only, and at every start and end sample.
constexpr uint64_t kCostlyEvery = 10;

/// Where the sampler thread keeps its descriptors.
enum class Table : int {
    Unknown = 0, ///< the sampler thread has not started
    Private = 1, ///< its own descriptor table (unshare(CLONE_FILES)): it holds what it needs
    Refused = 2, ///< unshare refused (e.g. a container's seccomp profile): it holds nothing
};

struct State {
    SamplerOptions options;
    CounterPlan plan;
    std::unique_ptr<Backend> papi;
    SchedstatBackend sched;
    RusageBackend rusage;
    PerfBackend perf;
    Backend* used[4] = {};
    int usedCount = 0;
    ThreadSlot slots[kMaxThreads];
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; // the registry, on the sampler thread
    int samplerTid = 0;
    pid_t pid = 0;
    uint64_t threadsNotCounted = 0;
    int onlineCpus = 0;   // read at start-up: the sampler thread may have no descriptor to spare
    int affinityCpus = 0;
};

State* g_state = nullptr;
std::atomic<bool> g_ready{false};
std::atomic<bool> g_stopped{false};
std::atomic<bool> g_started{false};
std::atomic<int> g_table{int(Table::Unknown)};
// Exit handshake with the sampler thread (futex words).
std::atomic<uint32_t> g_samplerLive{0}; // 1 while the sampler thread serves ticks and the exit
std::atomic<uint32_t> g_exitRequest{0}; // 1: take the last samples and stop
std::atomic<uint32_t> g_exitDone{0};    // 1: the last samples are written
thread_local ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local int t_tid __attribute__((tls_model("initial-exec"))) = 0; // 0 = not asked yet
// When the thread last took a boundary sample, in raw ticks and (while the tick rate is being
// learnt) CLOCK_MONOTONIC ns; 0 = never.
thread_local uint64_t t_lastBoundaryTicks __attribute__((tls_model("initial-exec"))) = 0;
thread_local int64_t t_lastBoundaryNs __attribute__((tls_model("initial-exec"))) = 0;

// The minimum gap between boundary samples in raw ticks; 0 while not yet known. Boundaries come
// at every MPI or NCCL call, so the check must not read the system clock (a vDSO clock_gettime
// costs 20-30 ns on virtual machines, a TSC read about half): the gap is measured in ticks, from
// the TSC rate the launcher measured, or, for an agent started without it, from a rate learnt
// from the samples themselves.
std::atomic<uint64_t> g_gapTicks{0};
std::atomic<uint64_t> g_originTicks{0}; // first boundary seen (ticks and ns), for the rate
std::atomic<int64_t> g_originNs{0};

// True when the calling thread sampled less than the minimum gap ago; otherwise marks now.
bool tooSoonForBoundarySample(uint64_t minGapNs, uint64_t ticks) {
    uint64_t gap = g_gapTicks.load(std::memory_order_relaxed);
    if (gap != 0) {
        if (t_lastBoundaryTicks != 0 && ticks - t_lastBoundaryTicks < gap) return true;
        t_lastBoundaryTicks = ticks;
        return false;
    }
    // Not known yet: the system clock decides, and each sample taken refines the rate.
    int64_t ns = hpcprof::agent::monotonicNs();
    if (!hpcprof::agent::detail::g_useTsc) { // ticks are nanoseconds
        g_gapTicks.store(minGapNs ? minGapNs : 1, std::memory_order_relaxed);
    } else if (g_originNs.load(std::memory_order_relaxed) == 0) {
        g_originTicks.store(ticks, std::memory_order_relaxed);
        g_originNs.store(ns, std::memory_order_relaxed);
    } else if (int64_t span = ns - g_originNs.load(std::memory_order_relaxed); span > 20'000'000) {
        double ticksPerNs = double(ticks - g_originTicks.load(std::memory_order_relaxed)) / double(span);
        uint64_t g = uint64_t(double(minGapNs) * ticksPerNs);
        g_gapTicks.store(g ? g : 1, std::memory_order_relaxed);
    }
    if (t_lastBoundaryNs != 0 && ns - t_lastBoundaryNs < int64_t(minGapNs)) return true;
    t_lastBoundaryNs = ns;
    t_lastBoundaryTicks = ticks;
    return false;
}

int gettidNow() { return int(syscall(SYS_gettid)); }

// Threads of this process now, from /proc/self/status (0 if it cannot be read). Start-up only.
int processThreadCount() {
    int fd = sys::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[4096];
    ssize_t n = sys::read(fd, buf, sizeof(buf) - 1);
    sys::close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    uint64_t threads = 0;
    return findNumberAfter(buf, "Threads:", threads) ? int(threads) : 0;
}

// True while the process has never had a second thread (glibc keeps the flag; without it the
// process is taken as multi-threaded). Then nothing of the program's can run while one of our
// calls holds a descriptor for its own duration.
bool singleThreaded() { return &__libc_single_threaded != nullptr && __libc_single_threaded != 0; }

struct ErrnoGuard {
    int saved = errno;
    ~ErrnoGuard() { errno = saved; }
};

long futexWait(std::atomic<uint32_t>& word, uint32_t expected, const timespec* deadline) {
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline (null: no deadline).
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_BITSET_PRIVATE, expected,
                   deadline, nullptr, FUTEX_BITSET_MATCH_ANY);
}

void futexWake(std::atomic<uint32_t>& word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

timespec monotonicIn(int64_t ns) {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += time_t(ns / 1'000'000'000);
    t.tv_nsec += long(ns % 1'000'000'000);
    if (t.tv_nsec >= 1'000'000'000L) {
        t.tv_nsec -= 1'000'000'000L;
        ++t.tv_sec;
    }
    return t;
}

bool before(const timespec& a, const timespec& b) {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

void writeSample(int32_t tid, raw::CounterTrigger trigger, const uint64_t* values) {
    uint64_t ts = agent::now();
    int slots = g_state->plan.slots;
    for (int first = 0; first < slots; first += int(raw::kCounterValuesPerRecord)) {
        int count = slots - first < int(raw::kCounterValuesPerRecord) ? slots - first
                                                                      : int(raw::kCounterValuesPerRecord);
        bool any = false;
        for (int i = 0; i < count; ++i) any |= values[first + i] != raw::kCounterMissing;
        if (!any) continue;
        auto* r = reinterpret_cast<raw::CounterRecord*>(agent::reserveSlot());
        if (!r) return; // dropped and counted by the recorder
        r->trigger = trigger;
        r->first = uint8_t(first);
        r->count = uint8_t(count);
        r->tid = tid;
        r->ts = ts;
        for (int i = 0; i < int(raw::kCounterValuesPerRecord); ++i)
            r->values[i] = i < count ? values[first + i] : raw::kCounterMissing;
        __atomic_store_n(&r->kind, raw::RecordKind::Counter, __ATOMIC_RELEASE);
    }
}

// Sampler thread: a thread's totals through the resources attach() opened (without the costly
// backends unless `all`).
void readAttached(ThreadSlot& s, uint64_t* values, bool all) {
    for (int i = 0; i < kMaxCounters; ++i) values[i] = raw::kCounterMissing;
    for (int b = 0; b < g_state->usedCount; ++b)
        if (all || !g_state->used[b]->costlyToRead()) g_state->used[b]->read(s, values);
}

// Any thread: what needs no descriptor kept (backend.hpp). Async-signal-safe.
void readUnattached(int tid, bool self, bool mayOpenFiles, uint64_t* values) {
    for (int i = 0; i < kMaxCounters; ++i) values[i] = raw::kCounterMissing;
    for (int b = 0; b < g_state->usedCount; ++b) g_state->used[b]->readUnattached(tid, self, mayOpenFiles, values);
}

bool attachesResources() { return g_table.load(std::memory_order_acquire) == int(Table::Private); }

// Finds or claims the slot of `tid`, without a lock: the sampler's thread discovery (own
// descriptor table) and a thread registering itself (sampler without one) never run for the
// same process, and a thread claims only its own tid.
ThreadSlot* claimSlot(int tid, bool& created) {
    created = false;
    for (auto& s : g_state->slots)
        if (s.tid.load(std::memory_order_acquire) == tid && s.state.load(std::memory_order_acquire) == 1) return &s;
    for (auto& s : g_state->slots) {
        uint8_t expected = 0;
        if (s.state.load(std::memory_order_relaxed) != 0 ||
            !s.state.compare_exchange_strong(expected, 3, std::memory_order_acq_rel))
            continue; // 3: being claimed
        s.timerRuntimeNs = ~0ull;
        s.attached = false;
        s.startComplete = false;
        s.tid.store(tid, std::memory_order_relaxed);
        s.state.store(1, std::memory_order_release);
        created = true;
        return &s;
    }
    __atomic_fetch_add(&g_state->threadsNotCounted, 1, __ATOMIC_RELAXED);
    return nullptr;
}

// Sampler thread, registry lock held: opens the slot's resources in the sampler's own table.
void attachLocked(ThreadSlot& s) {
    if (s.attached || !attachesResources()) return;
    int tid = s.tid.load(std::memory_order_relaxed);
    for (int b = 0; b < g_state->usedCount; ++b) g_state->used[b]->attach(s, tid);
    s.attached = true;
}

// Sampler thread: the thread's totals, through its resources where it has them.
void readSlot(ThreadSlot& s, uint64_t* values, bool all = true) {
    if (s.attached)
        readAttached(s, values, all);
    else
        readUnattached(s.tid.load(std::memory_order_relaxed), false, false, values);
}

void endLocked(ThreadSlot& s) {
    // perf descriptors still hold a finished thread's final counts; the /proc files are gone.
    uint64_t values[kMaxCounters];
    readSlot(s, values);
    writeSample(s.tid.load(std::memory_order_relaxed), raw::CounterTrigger::End, values);
    if (s.attached)
        for (int b = 0; b < g_state->usedCount; ++b) g_state->used[b]->detach(s);
    s.attached = false;
    s.state.store(2, std::memory_order_release); // never reused: a late reader stays safe
}

// Sampler thread with its own table, registry lock held: new threads get a slot and a Start
// sample, vanished ones an End sample.
void discoverLocked() {
    DIR* d = opendir("/proc/self/task");
    if (!d) return;
    for (auto& s : g_state->slots) s.seen = false;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        int tid = atoi(e->d_name);
        if (tid == g_state->samplerTid) continue;
        bool created = false;
        ThreadSlot* s = claimSlot(tid, created);
        if (!s) continue;
        s->seen = true;
        if (!s->attached) {
            attachLocked(*s);
            // A thread first sampled without descriptors (the main thread before main) needs
            // no second start unless that one lacked a value.
            if (!s->startComplete) {
                uint64_t values[kMaxCounters];
                readSlot(*s, values);
                writeSample(tid, raw::CounterTrigger::Start, values);
            }
        }
    }
    closedir(d);
    for (auto& s : g_state->slots)
        if (s.state.load(std::memory_order_acquire) == 1 && !s.seen) endLocked(s);
}

// Sampler thread, registry lock held: a timer (or the last) sample of every live thread; `all`:
// the costly backends too.
void sampleThreadsLocked(raw::CounterTrigger trigger, bool all) {
    uint64_t values[kMaxCounters];
    for (auto& s : g_state->slots) {
        if (s.state.load(std::memory_order_acquire) != 1) continue;
        int tid = s.tid.load(std::memory_order_relaxed);
        // A thread that has not run since its last timer sample has nothing new to count (MPI
        // progress threads, pools waiting for work): its CPU clock, one cheap read, says so.
        uint64_t runtime = 0;
        bool alive = threadCpuNs(tid, false, runtime);
        if (!alive && !s.attached) {
            s.state.store(2, std::memory_order_release); // gone, and nothing holds its counts
            continue;
        }
        if (trigger == raw::CounterTrigger::Timer && alive && runtime == s.timerRuntimeNs) continue;
        s.timerRuntimeNs = runtime;
        readSlot(s, values, all);
        writeSample(tid, trigger, values);
    }
}

void sampleProcess(raw::CounterTrigger trigger) {
    uint64_t values[kMaxCounters];
    for (auto& v : values) v = raw::kCounterMissing;
    bool any = false;
    for (int b = 0; b < g_state->usedCount; ++b) any |= g_state->used[b]->readProcess(values);
    if (any) writeSample(0, trigger, values);
}

void writeDefinition(const char* name, raw::CounterSource source, uint8_t slot, raw::CounterUnit unit,
                     uint32_t flags, const char* reason) {
    uint32_t nameId = agent::internString(name, std::strlen(name));
    uint32_t reasonId = reason[0] ? agent::internString(reason, std::strlen(reason)) : 0;
    auto* r = reinterpret_cast<raw::CounterDefRecord*>(agent::reserveSlot());
    if (!r) return;
    r->source = source;
    r->slot = slot;
    r->unit = unit;
    r->nameId = nameId;
    r->reasonId = reasonId;
    r->flags = flags;
    r->onlineCpus = g_state->onlineCpus;
    r->affinityCpus = g_state->affinityCpus;
    r->periodNs = g_state->options.periodNs;
    __atomic_store_n(&r->kind, raw::RecordKind::CounterDef, __ATOMIC_RELEASE);
}

void writeDefinitions() {
    for (int i = 0; i < g_state->plan.count; ++i) {
        const PlannedCounter& c = g_state->plan.counters[i];
        writeDefinition(c.name, c.source, c.slot, c.unit, c.flags, c.reason);
    }
}

void setup() {
    State& st = *g_state;
    st.onlineCpus = int(sysconf(_SC_NPROCESSORS_ONLN));
    cpu_set_t set;
    st.affinityCpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : st.onlineCpus;
    char papiWhyNot[kReasonSize] = "not requested";
    // On an oversubscribed host every rank thread switches often, and a hardware counter
    // attached to a thread costs each of its switches (as perf_event software counters do:
    // bench/counters/counter_bench): the default list leaves them out there.
    char groupRefusal[kReasonSize] = {};
    bool refuseGroup = refusesGroupHardwareCounters(st.options.localRanks, st.onlineCpus, groupRefusal);
    if (wantsPapi(st.options.list, refuseGroup)) st.papi = makePapiBackend(papiWhyNot);
    // Sources that a thread can read for itself without a descriptor come first, so that its
    // region-boundary samples carry them; perf_event counters cost every context switch of the
    // thread they are attached to, so they come last (backend.hpp, perf_backend.hpp).
    Backend* order[4] = {st.papi.get(), &st.sched, &st.rusage, &st.perf};
    buildPlan(st.options.list, order, 4, papiWhyNot, st.plan, refuseGroup ? groupRefusal : nullptr);
    for (Backend* b : order)
        if (b && b->used()) st.used[st.usedCount++] = b;
    writeDefinitions();
}

// Says in the trace that, without its own descriptor table, the sampler reads other threads'
// CPU clocks only (a pseudo-counter in the metadata's unavailable list and the run's warnings).
void noteSharedTable(int err) {
    char reason[kReasonSize];
    setReason(reason, "the counter sampler could not take a descriptor table of its own (");
    appendReason(reason, err ? std::strerror(err) : "HPCPROF_COUNTER_SHARED_TABLE=1");
    appendReason(reason, "): other threads are counted at their MPI/I/O boundaries, their task_clock on the timer");
    writeDefinition("timer_samples", raw::CounterSource::None, raw::kNoCounterSlot, raw::CounterUnit::Count, 0,
                    reason);
}

void finalSamplesLocked() {
    if (!g_ready.load(std::memory_order_acquire)) return;
    if (attachesResources()) discoverLocked();
    sampleThreadsLocked(raw::CounterTrigger::End, true);
}

void* samplerMain(void*) {
    pthread_setname_np(pthread_self(), "hpcprof-counter");
    // Never preempt the program: a batch-class thread does not preempt the thread running when
    // it wakes up; it runs when that thread blocks, yields or ends its time slice (a few ms at
    // most). Samples are timestamped when taken. (The idle class starved on a host whose cores
    // were all busy, and made a latency-bound oversubscribed MPI phase no faster: see
    // docs/counters.md, "Cost".)
    sched_param batch{};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
    g_state->samplerTid = gettidNow();
    bool own = !g_state->options.sharedTable && takeOwnDescriptorTable();
    int err = own ? 0 : errno;
    t_ownDescriptorTable = own;
    g_table.store(int(own ? Table::Private : Table::Refused), std::memory_order_release);
    pthread_mutex_lock(&g_state->lock);
    if (g_ready.load(std::memory_order_acquire)) {
        if (own)
            discoverLocked();
        else
            noteSharedTable(g_state->options.sharedTable ? 0 : err);
    }
    pthread_mutex_unlock(&g_state->lock);
    g_samplerLive.store(1, std::memory_order_release);
    const uint64_t period = g_state->options.periodNs;
    timespec next = monotonicIn(int64_t(period));
    uint64_t ticks = 0;
    while (g_exitRequest.load(std::memory_order_acquire) == 0) {
        futexWait(g_exitRequest, 0, period ? &next : nullptr);
        if (g_exitRequest.load(std::memory_order_acquire) != 0) break;
        timespec now = monotonicIn(0);
        if (period == 0 || before(now, next)) continue; // woken early
        pthread_mutex_lock(&g_state->lock);
        if (g_ready.load(std::memory_order_acquire)) {
            ++ticks;
            if (own && ticks % kDiscoverEvery == 0) discoverLocked();
            sampleThreadsLocked(raw::CounterTrigger::Timer, ticks % kCostlyEvery == kCostlyEvery / 2);
            sampleProcess(raw::CounterTrigger::Timer);
        }
        pthread_mutex_unlock(&g_state->lock);
        // Late (a busy host, see above): the next tick is a period from now, not a burst of
        // the ticks that were missed.
        next.tv_sec += time_t(period / 1'000'000'000ull);
        next.tv_nsec += long(period % 1'000'000'000ull);
        if (next.tv_nsec >= 1'000'000'000L) {
            next.tv_nsec -= 1'000'000'000L;
            ++next.tv_sec;
        }
        if (before(next, now)) next = monotonicIn(int64_t(period));
    }
    pthread_mutex_lock(&g_state->lock);
    finalSamplesLocked();
    pthread_mutex_unlock(&g_state->lock);
    g_exitDone.store(1, std::memory_order_release);
    futexWake(g_exitDone);
    return nullptr;
}

void onForkChild() {
    // The child has none of the parent's threads and no sampler: counting stops here.
    __atomic_store_n(&hpcprof_counters_boundaries, 0u, __ATOMIC_RELEASE);
    g_ready.store(false, std::memory_order_relaxed);
    g_stopped.store(true, std::memory_order_relaxed);
    g_threadPending.store(false, std::memory_order_relaxed);
    g_samplerLive.store(0, std::memory_order_relaxed);
    t_slot = nullptr;
    t_tid = 0;
}

} // namespace

uint32_t parseBoundaries(const char* list) {
    uint32_t bits = 0;
    const char* p = list;
    while (p && *p) {
        const char* comma = std::strchr(p, ',');
        size_t len = comma ? size_t(comma - p) : std::strlen(p);
        if (len == 3 && std::strncmp(p, "mpi", 3) == 0) bits |= kCounterBoundaryMpi;
        if (len == 2 && std::strncmp(p, "io", 2) == 0) bits |= kCounterBoundaryIo;
        if (len == 4 && std::strncmp(p, "nccl", 4) == 0) bits |= kCounterBoundaryNccl;
        if (len == 4 && std::strncmp(p, "nvtx", 4) == 0) bits |= kCounterBoundaryNvtx;
        if (len == 3 && std::strncmp(p, "all", 3) == 0)
            bits |= kCounterBoundaryMpi | kCounterBoundaryIo | kCounterBoundaryNccl | kCounterBoundaryNvtx;
        p = comma ? comma + 1 : nullptr;
    }
    return bits;
}

int localRanksFromEnvironment(const char* (*getenvFn)(const char*)) {
    // Open MPI, PMIx, MPICH/Hydra, Slurm (only when given as one number), torchrun.
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE", "MPI_LOCALNRANKS",
                             "SLURM_NTASKS_PER_NODE", "LOCAL_WORLD_SIZE"}) {
        const char* v = getenvFn ? getenvFn(name) : std::getenv(name);
        char* end = nullptr;
        long n = v && *v ? std::strtol(v, &end, 10) : 0;
        if (n > 0 && n <= INT32_MAX && end && *end == 0) return int(n);
    }
    return 0;
}

SamplerOptions optionsFromEnvironment() {
    SamplerOptions o;
    // settings.def gives each variable's range: a bad value keeps the default (hpcprof run has
    // warned about it), never a negative period cast to a huge one. A valid value given is kept
    // as it is on an oversubscribed host; the defaults stretch (stretchForOversubscription).
    using agent::Setting;
    if (const char* l = agent::textSetting(Setting::Counters)) o.list = l;
    o.periodNs = uint64_t(agent::numberSetting(Setting::CounterPeriodMs) * 1e6);
    o.periodGiven = agent::textSetting(Setting::CounterPeriodMs) != nullptr;
    if (const char* b = std::getenv(agent::settingSpec(Setting::CounterBoundaries).variable))
        if (!*b || agent::textSetting(Setting::CounterBoundaries)) o.boundaries = parseBoundaries(b);
    if (const char* t = agent::textSetting(Setting::CounterThread); t && std::strcmp(t, "eager") == 0)
        o.deferThread = false;
    o.minGapNs = uint64_t(agent::numberSetting(Setting::CounterMinGapUs) * 1e3);
    o.minGapGiven = agent::textSetting(Setting::CounterMinGapUs) != nullptr;
    o.sharedTable = agent::numberSetting(Setting::CounterSharedTable) == 1;
    o.localRanks = localRanksFromEnvironment();
    return o;
}

void stretchForOversubscription(SamplerOptions& o, int onlineCpus) {
    if (o.localRanks <= 0 || onlineCpus <= 0 || o.localRanks <= onlineCpus) return;
    uint64_t factor = uint64_t((o.localRanks + onlineCpus - 1) / onlineCpus);
    if (!o.periodGiven) o.periodNs *= factor;
    if (!o.minGapGiven) o.minGapNs *= factor;
}

bool refusesGroupHardwareCounters(int localRanks, int onlineCpus, char* reason) {
    if (localRanks <= 0 || onlineCpus <= 0 || localRanks <= onlineCpus) return false;
    setReason(reason, "not in the default list on a host with more ranks than CPUs (");
    appendNumber(reason, localRanks);
    appendReason(reason, " ranks, ");
    appendNumber(reason, onlineCpus);
    appendReason(reason, " CPUs): a hardware counter costs every context switch of a counted thread; "
                         "name it in --counters to count it anyway");
    return true;
}

void startSampler(const SamplerOptions& options) {
    if (g_started.exchange(true)) return;
    g_state = new State();
    g_state->options = options;
    g_state->pid = getpid();
    // Each tick costs a wakeup (~25 us of CPU on a virtual machine) and each sample system calls;
    // on a host where every CPU is taken, either is time away from a rank on the critical path
    // of a latency-bound phase: with more ranks than CPUs the defaults sample less often, so
    // that the ranks together sample each CPU no more often than one rank does on a host that
    // fits (docs/counters.md, "Cost").
    stretchForOversubscription(g_state->options, int(sysconf(_SC_NPROCESSORS_ONLN)));
    // With the TSC rate the launcher measured (HPCPROF_TSC_HZ) the boundary gap in ticks is
    // known at once; without it, tooSoonForBoundarySample learns it from the first samples.
    if (uint64_t hz = agent::readConfig().tscHz; hz && agent::detail::g_useTsc) {
        uint64_t gap = uint64_t(double(g_state->options.minGapNs) * double(hz) / 1e9);
        g_gapTicks.store(gap ? gap : 1, std::memory_order_relaxed);
    }
    pthread_atfork(nullptr, nullptr, onForkChild);
    std::atexit(stopSampler);
    // Probing runs here, on the starting thread (the agent's constructor, before main): loading
    // libpapi while the program runs can race with libraries that patch code at start-up (Open
    // MPI's memory patcher crashed ranks when libpapi was dlopen'ed from the sampler thread).
    // Every descriptor a probe opens is closed before main starts.
    g_state->samplerTid = -1;
    // libpapi reads /proc and /sys through the hooked libc calls while it initialises: that is
    // hpcprof's work, not the program's I/O, so recording is paused for it. (This runs before
    // main; a thread another library's constructor started would lose its calls meanwhile.)
    uint32_t sources = __atomic_load_n(&agent::detail::g_sources, __ATOMIC_RELAXED);
    __atomic_store_n(&agent::detail::g_sources, sources & uint32_t(agent::SourceBit::Counters),
                     __ATOMIC_RELAXED);
    setup();
    __atomic_store_n(&agent::detail::g_sources, sources, __ATOMIC_RELAXED);
    bool ready = g_state->plan.slots > 0;
    if (!ready) return;
    g_ready.store(true, std::memory_order_release);
    __atomic_store_n(&hpcprof_counters_boundaries, options.boundaries, __ATOMIC_RELEASE);
    // The starting thread (main, before main()) is counted from here, not from whenever the
    // sampler thread first sees it.
    int self = gettidNow();
    bool created = false;
    t_slot = claimSlot(self, created);
    uint64_t values[kMaxCounters];
    readUnattached(self, true, singleThreaded(), values);
    writeSample(self, raw::CounterTrigger::Start, values);
    if (t_slot) {
        bool complete = true;
        for (int i = 0; i < g_state->plan.slots; ++i) complete &= values[i] != raw::kCounterMissing;
        t_slot->startComplete = complete;
    }
    // A program that is still single-threaded gets its sampler thread when it starts a thread
    // of its own (the pthread_create hook calls hpcprof_counters_thread_starting); until then
    // it is sampled at its region boundaries and at exit. A second thread switches the C
    // library to multi-threaded mode for good: every cancellation-point system call then
    // toggles cancellation around itself, stdio and malloc take locks (a tight pwrite loop:
    // +25 ns per call of the thread's CPU time with the timer thread, although it has a
    // descriptor table of its own; bench/agent/pwrite_loop with HPCPROF_COUNTER_THREAD=eager).
    bool alone = &__libc_single_threaded != nullptr ? singleThreaded() : processThreadCount() <= 1;
    if (options.deferThread && alone) {
        g_threadPending.store(true, std::memory_order_release);
        return;
    }
    startSamplerThread();
}

namespace {
void startSamplerThread() {
    // The sampler thread must not inherit a signal mask that lets it take the program's signals.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_create(&th, &attr, samplerMain, nullptr);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}
} // namespace

void stopSampler() {
    if (!g_state || getpid() != g_state->pid || g_stopped.exchange(true)) return;
    __atomic_store_n(&hpcprof_counters_boundaries, 0u, __ATOMIC_RELEASE);
    if (!g_ready.load(std::memory_order_acquire)) return;
    ErrnoGuard keepErrno;
    // The sampler thread takes the last samples through its own descriptors; it may wait for a
    // CPU (idle class), so the wait is bounded.
    g_exitRequest.store(1, std::memory_order_release);
    bool answered = false;
    if (g_samplerLive.load(std::memory_order_acquire)) {
        futexWake(g_exitRequest);
        timespec deadline = monotonicIn(kExitWaitNs);
        while (g_exitDone.load(std::memory_order_acquire) == 0)
            if (futexWait(g_exitDone, 0, &deadline) != 0 && errno == ETIMEDOUT) break;
        answered = g_exitDone.load(std::memory_order_acquire) != 0;
    }
    if (!answered) {
        // No sampler thread (a program that never started a thread), or it did not answer in
        // time: this thread's own counters, and the CPU clocks of the threads it knows.
        int self = gettidNow();
        uint64_t values[kMaxCounters];
        readUnattached(self, true, singleThreaded(), values);
        writeSample(self, raw::CounterTrigger::End, values);
        for (auto& s : g_state->slots) {
            int tid = s.tid.load(std::memory_order_acquire);
            if (s.state.load(std::memory_order_acquire) != 1 || tid == self) continue;
            readUnattached(tid, false, false, values);
            writeSample(tid, raw::CounterTrigger::End, values);
        }
    }
    sampleProcess(raw::CounterTrigger::End);
    g_ready.store(false, std::memory_order_release);
}

const CounterPlan& currentPlan() {
    static const CounterPlan kEmpty{};
    return g_state ? g_state->plan : kEmpty;
}

const uint64_t* boundaryGapTicksAddress() {
    static_assert(sizeof(g_gapTicks) == sizeof(uint64_t) && std::atomic<uint64_t>::is_always_lock_free);
    return reinterpret_cast<const uint64_t*>(&g_gapTicks);
}

} // namespace hpcprof::agent::counters

using namespace hpcprof::agent::counters;

extern "C" __attribute__((visibility("default"))) void hpcprof_counters_sample(uint32_t trigger) {
    hpcprof_counters_sample_at(trigger, hpcprof::agent::now());
}

extern "C" __attribute__((visibility("default"))) int hpcprof_counters_sample_at(uint32_t trigger,
                                                                                 uint64_t ticks) {
    if (!g_ready.load(std::memory_order_acquire)) return 0;
    // A sample costs a microsecond or two (system calls): at most one per minimum gap per
    // thread, so a run of short calls costs at most sample cost / gap. A call entered after a
    // long phase, or one that lasted long, still gets its sample exactly at its boundary.
    if (tooSoonForBoundarySample(g_state->options.minGapNs, ticks)) return 0;
    ErrnoGuard keepErrno; // the hooks promise the program its errno untouched
    if (t_tid == 0) t_tid = gettidNow();
    // A sampler without its own descriptor table lists no threads: a thread that comes here
    // registers itself, so that the timer reads its CPU clock too.
    if (!t_slot && g_table.load(std::memory_order_acquire) == int(Table::Refused)) {
        bool created = false;
        t_slot = claimSlot(t_tid, created);
    }
    uint64_t values[kMaxCounters];
    readUnattached(t_tid, true, singleThreaded(), values);
    writeSample(t_tid, hpcprof::schema::raw::CounterTrigger(trigger), values);
    return 1;
}
