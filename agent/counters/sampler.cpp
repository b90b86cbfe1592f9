// SPDX-License-Identifier: MIT
#include "sampler.hpp"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "boundary.hpp"
#include "papi_backend.hpp"
#include "perf_backend.hpp"
#include "proc_backends.hpp"
#include "runtime/recorder.hpp"
#include "runtime/syscalls.hpp"

extern "C" {
__attribute__((visibility("default"))) uint32_t hpcprof_counters_boundaries = 0;
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

namespace raw = schema::raw;

namespace {

constexpr int kMaxThreads = 256; // per process; each costs up to ~8 descriptors

struct State {
    SamplerOptions options;
    CounterPlan plan;
    std::unique_ptr<Backend> papi;
    PerfBackend perf;
    SchedstatBackend sched;
    RusageBackend rusage;
    Backend* used[4] = {};
    int usedCount = 0;
    ThreadSlot slots[kMaxThreads];
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int samplerTid = 0;
    pid_t pid = 0;
    uint64_t threadsNotCounted = 0;
};

State* g_state = nullptr;
std::atomic<bool> g_ready{false};
std::atomic<bool> g_stopped{false};
std::atomic<bool> g_started{false};
thread_local ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;
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

// Threads of this process now, from /proc/self/status (0 if it cannot be read).
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

struct ErrnoGuard {
    int saved = errno;
    ~ErrnoGuard() { errno = saved; }
};

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

void readThread(ThreadSlot& s, bool self, uint64_t* values) {
    for (int i = 0; i < kMaxCounters; ++i) values[i] = raw::kCounterMissing;
    for (int b = 0; b < g_state->usedCount; ++b) g_state->used[b]->read(s, self, values);
}

// Registry lock held. Finds or creates the slot of `tid`.
ThreadSlot* attachLocked(int tid, bool& created) {
    created = false;
    ThreadSlot* free = nullptr;
    for (auto& s : g_state->slots) {
        int32_t t = s.tid.load(std::memory_order_relaxed);
        if (t == tid && s.state.load(std::memory_order_relaxed) == 1) return &s;
        if (!free && s.state.load(std::memory_order_relaxed) == 0) free = &s;
    }
    if (!free) {
        g_state->threadsNotCounted++;
        return nullptr;
    }
    free->timerRuntimeNs = ~0ull;
    for (int b = 0; b < g_state->usedCount; ++b) g_state->used[b]->attach(*free, tid);
    free->tid.store(tid, std::memory_order_relaxed);
    free->state.store(1, std::memory_order_release);
    created = true;
    return free;
}

void endLocked(ThreadSlot& s) {
    // perf descriptors still hold a finished thread's final counts; the /proc files are gone.
    uint64_t values[kMaxCounters];
    readThread(s, false, values);
    writeSample(s.tid.load(std::memory_order_relaxed), raw::CounterTrigger::End, values);
    for (int b = 0; b < g_state->usedCount; ++b) g_state->used[b]->detach(s);
    s.state.store(2, std::memory_order_release); // never reused: a late boundary read stays safe
}

// Registry lock held: new threads get a slot and a Start sample, vanished ones an End sample.
void discoverLocked() {
    DIR* d = opendir("/proc/self/task");
    if (!d) return;
    for (auto& s : g_state->slots) s.seen = false;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        int tid = atoi(e->d_name);
        if (tid == g_state->samplerTid) continue;
        bool created = false;
        ThreadSlot* s = attachLocked(tid, created);
        if (!s) continue;
        s->seen = true;
        if (created) {
            uint64_t values[kMaxCounters];
            readThread(*s, false, values);
            writeSample(tid, raw::CounterTrigger::Start, values);
        }
    }
    closedir(d);
    for (auto& s : g_state->slots)
        if (s.state.load(std::memory_order_relaxed) == 1 && !s.seen &&
            !s.busy.exchange(true, std::memory_order_acquire)) {
            endLocked(s);
            s.busy.store(false, std::memory_order_release);
        }
}

void sampleProcessLocked(raw::CounterTrigger trigger) {
    uint64_t values[kMaxCounters];
    for (auto& v : values) v = raw::kCounterMissing;
    bool any = false;
    for (int b = 0; b < g_state->usedCount; ++b) any |= g_state->used[b]->readProcess(values);
    if (any) writeSample(0, trigger, values);
}

void writeDefinitions() {
    int online = int(sysconf(_SC_NPROCESSORS_ONLN));
    cpu_set_t set;
    int affinity = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : online;
    for (int i = 0; i < g_state->plan.count; ++i) {
        const PlannedCounter& c = g_state->plan.counters[i];
        uint32_t nameId = agent::internString(c.name, std::strlen(c.name));
        uint32_t reasonId = c.reason[0] ? agent::internString(c.reason, std::strlen(c.reason)) : 0;
        auto* r = reinterpret_cast<raw::CounterDefRecord*>(agent::reserveSlot());
        if (!r) return;
        r->source = c.source;
        r->slot = c.slot;
        r->unit = c.unit;
        r->nameId = nameId;
        r->reasonId = reasonId;
        r->flags = c.flags;
        r->onlineCpus = online;
        r->affinityCpus = affinity;
        r->periodNs = g_state->options.periodNs;
        __atomic_store_n(&r->kind, raw::RecordKind::CounterDef, __ATOMIC_RELEASE);
    }
}

void setup() {
    State& st = *g_state;
    char papiWhyNot[kReasonSize] = "not requested";
    if (wantsPapi(st.options.list)) st.papi = makePapiBackend(papiWhyNot);
    Backend* order[4] = {st.papi.get(), &st.perf, &st.sched, &st.rusage};
    buildPlan(st.options.list, order, 4, papiWhyNot, st.plan);
    for (Backend* b : order)
        if (b && b->used()) st.used[st.usedCount++] = b;
    writeDefinitions();
}

void* samplerMain(void*) {
    pthread_setname_np(pthread_self(), "hpcprof-counter");
    g_state->samplerTid = gettidNow();
    pthread_mutex_lock(&g_state->lock);
    if (g_ready.load(std::memory_order_acquire)) {
        discoverLocked();
        sampleProcessLocked(raw::CounterTrigger::Start);
    }
    pthread_mutex_unlock(&g_state->lock);
    if (g_state->plan.slots == 0 || g_state->options.periodNs == 0) return nullptr;
    timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    constexpr uint64_t kDiscoverEvery = 10;
    uint64_t ticks = 0;
    while (!g_stopped.load(std::memory_order_acquire)) {
        next.tv_nsec += long(g_state->options.periodNs % 1'000'000'000ull);
        next.tv_sec += time_t(g_state->options.periodNs / 1'000'000'000ull);
        if (next.tv_nsec >= 1'000'000'000L) {
            next.tv_nsec -= 1'000'000'000L;
            ++next.tv_sec;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
        }
        // Listing /proc/self/task costs more than sampling a thread: look for new threads every
        // kDiscoverEvery periods (threads that call a sampled region register themselves).
        sampleAll(++ticks % kDiscoverEvery == 0);
    }
    return nullptr;
}

void onForkChild() {
    // The child has none of the parent's threads and no sampler: counting stops here.
    __atomic_store_n(&hpcprof_counters_boundaries, 0u, __ATOMIC_RELEASE);
    g_ready.store(false, std::memory_order_relaxed);
    g_stopped.store(true, std::memory_order_relaxed);
    g_threadPending.store(false, std::memory_order_relaxed);
    t_slot = nullptr;
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

SamplerOptions optionsFromEnvironment() {
    SamplerOptions o;
    // settings.def gives each variable's range: a bad value keeps the default (hpcprof run has
    // warned about it), never a negative period cast to a huge one.
    using agent::Setting;
    if (const char* l = agent::textSetting(Setting::Counters)) o.list = l;
    o.periodNs = uint64_t(agent::numberSetting(Setting::CounterPeriodMs) * 1e6);
    if (const char* b = std::getenv(agent::settingSpec(Setting::CounterBoundaries).variable))
        if (!*b || agent::textSetting(Setting::CounterBoundaries)) o.boundaries = parseBoundaries(b);
    if (const char* t = agent::textSetting(Setting::CounterThread); t && std::strcmp(t, "eager") == 0)
        o.deferThread = false;
    o.minGapNs = uint64_t(agent::numberSetting(Setting::CounterMinGapUs) * 1e3);
    return o;
}

void startSampler(const SamplerOptions& options) {
    if (g_started.exchange(true)) return;
    g_state = new State();
    g_state->options = options;
    g_state->pid = getpid();
    // With the TSC rate the launcher measured (HPCPROF_TSC_HZ) the boundary gap in ticks is
    // known at once; without it, tooSoonForBoundarySample learns it from the first samples.
    if (uint64_t hz = agent::readConfig().tscHz; hz && agent::detail::g_useTsc) {
        uint64_t gap = uint64_t(double(options.minGapNs) * double(hz) / 1e9);
        g_gapTicks.store(gap ? gap : 1, std::memory_order_relaxed);
    }
    pthread_atfork(nullptr, nullptr, onForkChild);
    std::atexit(stopSampler);
    // Probing runs here, on the starting thread (the agent's constructor, before main): loading
    // libpapi while the program runs can race with libraries that patch code at start-up (Open
    // MPI's memory patcher crashed ranks when libpapi was dlopen'ed from the sampler thread).
    g_state->samplerTid = -1;
    pthread_mutex_lock(&g_state->lock);
    // libpapi reads /proc and /sys through the hooked libc calls while it initialises: that is
    // hpcprof's work, not the program's I/O, so recording is paused for it. (This runs before
    // main; a thread another library's constructor started would lose its calls meanwhile.)
    uint32_t sources = __atomic_load_n(&agent::detail::g_sources, __ATOMIC_RELAXED);
    __atomic_store_n(&agent::detail::g_sources, sources & uint32_t(agent::SourceBit::Counters),
                     __ATOMIC_RELAXED);
    setup();
    __atomic_store_n(&agent::detail::g_sources, sources, __ATOMIC_RELAXED);
    bool ready = g_state->plan.slots > 0;
    if (ready) {
        g_ready.store(true, std::memory_order_release);
        __atomic_store_n(&hpcprof_counters_boundaries, options.boundaries, __ATOMIC_RELEASE);
        // The starting thread (main, before main()) is counted from here, not from whenever
        // the sampler thread first sees it.
        bool created = false;
        if (ThreadSlot* self = attachLocked(gettidNow(), created)) {
            uint64_t values[kMaxCounters];
            readThread(*self, true, values);
            writeSample(self->tid.load(std::memory_order_relaxed), raw::CounterTrigger::Start, values);
            t_slot = self;
        }
    }
    pthread_mutex_unlock(&g_state->lock);
    if (!options.startThread || !ready) return;
    // A second thread in the process makes every one of the program's system calls dearer: the
    // kernel takes a reference on the file for each descriptor call once the descriptor table
    // is shared (55 ns per call measured on the development machine). A program that is still
    // single-threaded therefore gets its sampler when it starts its own first thread (the
    // pthread_create hook calls hpcprof_counters_thread_starting); until then it is sampled at
    // its region boundaries and at exit.
    if (options.deferThread && processThreadCount() <= 1) {
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

void sampleAll(bool discover) {
    if (!g_state || g_stopped.load(std::memory_order_acquire)) return;
    pthread_mutex_lock(&g_state->lock);
    if (!g_stopped.load(std::memory_order_acquire) && g_ready.load(std::memory_order_acquire)) {
        if (discover) discoverLocked();
        uint64_t values[kMaxCounters];
        for (auto& s : g_state->slots) {
            if (s.state.load(std::memory_order_acquire) != 1) continue;
            if (s.busy.exchange(true, std::memory_order_acquire)) continue; // it samples itself
            // A thread that has not run since its last timer sample has nothing new to count
            // (MPI progress threads, pools waiting for work): one short read instead of every
            // backend's, which matters when the ranks already use every core.
            uint64_t runtime = 0;
            bool ran = !readSchedRuntime(s.schedFd, runtime) || runtime != s.timerRuntimeNs;
            if (ran) {
                s.timerRuntimeNs = runtime;
                readThread(s, false, values);
                writeSample(s.tid.load(std::memory_order_relaxed), raw::CounterTrigger::Timer, values);
            }
            s.busy.store(false, std::memory_order_release);
        }
        sampleProcessLocked(raw::CounterTrigger::Timer);
    }
    pthread_mutex_unlock(&g_state->lock);
}

void stopSampler() {
    if (!g_state || getpid() != g_state->pid) return;
    pthread_mutex_lock(&g_state->lock);
    if (!g_stopped.exchange(true) && g_ready.load(std::memory_order_acquire)) {
        __atomic_store_n(&hpcprof_counters_boundaries, 0u, __ATOMIC_RELEASE);
        uint64_t values[kMaxCounters];
        for (auto& s : g_state->slots) {
            if (s.state.load(std::memory_order_acquire) != 1) continue;
            if (s.busy.exchange(true, std::memory_order_acquire)) continue;
            readThread(s, false, values);
            writeSample(s.tid.load(std::memory_order_relaxed), raw::CounterTrigger::End, values);
            s.busy.store(false, std::memory_order_release);
        }
        sampleProcessLocked(raw::CounterTrigger::End);
        g_ready.store(false, std::memory_order_release);
    }
    pthread_mutex_unlock(&g_state->lock);
}

const CounterPlan& currentPlan() {
    static const CounterPlan kEmpty{};
    return g_state ? g_state->plan : kEmpty;
}

} // namespace hpcprof::agent::counters

using namespace hpcprof::agent::counters;

extern "C" __attribute__((visibility("default"))) void hpcprof_counters_sample(uint32_t trigger) {
    hpcprof_counters_sample_at(trigger, hpcprof::agent::now());
}

extern "C" __attribute__((visibility("default"))) int hpcprof_counters_sample_at(uint32_t trigger,
                                                                                 uint64_t ticks) {
    if (!g_ready.load(std::memory_order_acquire)) return 0;
    // A sample costs microseconds (system calls): at most one per minimum gap per thread, so a
    // run of short calls costs at most sample cost / gap. A call entered after a long phase, or
    // one that lasted long, still gets its sample exactly at its boundary.
    if (tooSoonForBoundarySample(g_state->options.minGapNs, ticks)) return 0;
    ErrnoGuard keepErrno; // the hooks promise the program its errno untouched
    ThreadSlot* s = t_slot;
    if (!s || s->state.load(std::memory_order_relaxed) != 1) {
        // First boundary of this thread: register it (once). The sampler may hold the registry
        // for a while (discovering threads); wait for it a little, never block: a signal handler
        // on a thread that holds the lock itself must not deadlock.
        int tries = 0;
        while (pthread_mutex_trylock(&g_state->lock) != 0) {
            if (++tries > 2000) return 0; // about a few ms: give up this sample, try at the next
            sched_yield();
        }
        bool created = false;
        s = g_ready.load(std::memory_order_acquire) ? attachLocked(gettidNow(), created) : nullptr;
        pthread_mutex_unlock(&g_state->lock);
        if (!s) return 0;
        t_slot = s;
    }
    if (s->busy.exchange(true, std::memory_order_acquire)) return 0; // sampler or a signal handler
    uint64_t values[kMaxCounters];
    readThread(*s, true, values);
    writeSample(s->tid.load(std::memory_order_relaxed), hpcprof::schema::raw::CounterTrigger(trigger),
                values);
    s->busy.store(false, std::memory_order_release);
    return 1;
}
