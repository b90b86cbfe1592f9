// SPDX-License-Identifier: MIT
#include "wr_fold.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "hpcprof/launch/config.hpp"
#include "hpcprof/launch/tsc_frequency.hpp"
#include "runtime/clock.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::agent::ibverbs::fold {

namespace raw = schema::raw;

namespace {

constexpr int kQueuesPerThread = 64; // work queues one thread can fold at once; more: in full
constexpr int kSigAllSlots = 1024;   // QPs created with sq_sig_all that we can tell apart

/// One thread's queues, mapped at its first post (about 400 KiB of address space; only the
/// pages of queues in use are touched).
struct Table {
    uint32_t generation; ///< collector generation it was made in (a forked child starts afresh)
    WorkQueue queues[kQueuesPerThread];
};

uint64_t g_bucketTicks = 0;  // 1 ms in ticks
uint64_t g_nsPerTickQ32 = 0; // ns per tick, 32.32 fixed point
std::once_flag g_configured;
pthread_key_t g_tableKey;

thread_local Table* t_table __attribute__((tls_model("initial-exec"))) = nullptr;

// Keys of live QPs created with sq_sig_all (open addressing; 0 = free, 1 = deleted).
std::atomic<uint64_t> g_sigAll[kSigAllSlots];

unsigned slotOf(uint64_t key, unsigned size) { return unsigned((key * 0x9E3779B97F4A7C15ull) >> 40) % size; }

bool signalsAll(uint64_t key) {
    unsigned s = slotOf(key, kSigAllSlots);
    for (int i = 0; i < kSigAllSlots; ++i) {
        uint64_t k = g_sigAll[(s + unsigned(i)) % kSigAllSlots].load(std::memory_order_acquire);
        if (k == key) return true;
        if (k == 0) return false;
    }
    return false;
}

void freeTable(void* table) {
    if (t_table == table) t_table = nullptr;
    detail::t_last = nullptr;
    munmap(table, sizeof(Table));
}

Table* table() {
    Table* t = t_table;
    if (t && t->generation == agent::detail::g_generation) [[likely]]
        return t;
    if (!t) {
        void* p = mmap(nullptr, sizeof(Table), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        t = static_cast<Table*>(p);
        t_table = t;
        pthread_setspecific(g_tableKey, t); // unmapped when the thread exits
    }
    // New, or inherited from the parent of a fork: its open records are the parent's.
    for (WorkQueue& q : t->queues) q.key = 0;
    t->generation = agent::detail::g_generation;
    return t;
}

/// The queue with `key`, or the free slot where it belongs; nullptr when the table is full.
WorkQueue* probe(Table* t, uint64_t key) {
    unsigned s = slotOf(key, kQueuesPerThread);
    for (int i = 0; i < kQueuesPerThread; ++i) {
        WorkQueue& q = t->queues[(s + unsigned(i)) % kQueuesPerThread];
        if (q.key == key || q.key == 0) return &q;
    }
    return nullptr;
}

WorkQueue* findQueue(Table* t, uint64_t key) {
    WorkQueue* q = probe(t, key);
    return q && q->key == key ? q : nullptr;
}

void extendTo(raw::RdmaRecord* r, uint64_t ts) {
    if (ts > r->u.aggregate.end) r->u.aggregate.end = ts;
}

} // namespace

namespace detail {

uint32_t g_perBucket = 0;
thread_local WorkQueue* t_last __attribute__((tls_model("initial-exec"))) = nullptr;

// The bucket that `ts` falls in starts here: a new budget, a new Aggregate when one is needed.
void roll(WorkQueue& q, uint64_t ts) {
    q.bucketEnd = ts + g_bucketTicks;
    q.kept = 0;
    q.open = nullptr;
}

// The bucket's Aggregate record, written into the thread's file at its first use.
raw::RdmaRecord* openAggregate(WorkQueue& q, uint64_t ts) {
    raw::RdmaRecord* r = reinterpret_cast<raw::RdmaRecord*>(agent::reserveSlot());
    if (!r) return nullptr; // the thread's buffer is full (counted as dropped)
    r->action = raw::RdmaAction::Aggregate;
    r->device = uint16_t((q.key >> 32) - 1);
    r->qpNum = uint32_t(q.key); // with the receives bit for a receive queue
    r->ts = ts;
    r->u.aggregate.end = ts;
    __atomic_store_n(&r->kind, raw::RecordKind::Rdma, __ATOMIC_RELEASE);
    q.open = r;
    return r;
}

WorkQueue* findOrCreate(uint16_t device, uint32_t qpNum, bool receives) {
    if (g_perBucket == 0) return nullptr;
    Table* t = table();
    if (!t) return nullptr;
    uint64_t key = keyOf(device, qpNum, receives);
    WorkQueue* q = probe(t, key);
    if (!q) return nullptr;
    if (q->key == 0) {
        q->key = key;
        q->bucketEnd = 0;
        q->open = nullptr;
        q->kept = 0;
        q->head = q->tail = 0;
        q->generation = t->generation;
        q->track = Track::Following;
        q->sigAll = receives || signalsAll(keyOf(device, qpNum, false));
    }
    t_last = q;
    return q;
}

} // namespace detail

using detail::keyOf;

void configure() {
    std::call_once(g_configured, [] {
        pthread_key_create(&g_tableKey, freeTable);
        agent::Config c = agent::readConfig();
        uint64_t hz = 1'000'000'000; // ticks are ns without the TSC
        if (agent::detail::g_useTsc) hz = c.tscHz ? c.tscHz : agent::measureTscHz(2'000'000);
        if (hz == 0) return; // no way to tell time apart: never fold
        g_bucketTicks = hz / 1000;
        g_nsPerTickQ32 = uint64_t((unsigned __int128)1'000'000'000 << 32) / hz;
        detail::g_perBucket = c.rdmaEventRate ? (c.rdmaEventRate + 999) / 1000 : 0;
    });
}

Mark mark(const WorkQueue& q) {
    Mark m{q.tail, q.kept, q.open, 0, 0};
    if (q.open) {
        m.posted = q.open->u.aggregate.posted;
        m.bytes = q.open->u.aggregate.bytes;
    }
    return m;
}

void rollBack(WorkQueue& q, const Mark& m) {
    // Nothing of the batch can have completed, so its FIFO entries are still at the tail.
    if (q.tail - q.head >= q.tail - m.tail) q.tail = m.tail;
    q.kept = m.kept;
    if (m.open) {
        m.open->u.aggregate.posted = m.posted;
        m.open->u.aggregate.bytes = m.bytes;
    }
    if (q.open && q.open != m.open) {
        q.open->u.aggregate.posted = 0; // opened by the batch (a new bucket): none of it posted
        q.open->u.aggregate.bytes = 0;
    }
}

void fail(uint16_t device, uint32_t qpNum) {
    Table* t = t_table;
    if (!t || t->generation != agent::detail::g_generation) return;
    for (bool receives : {false, true})
        if (WorkQueue* q = findQueue(t, keyOf(device, qpNum, receives))) {
            q->track = Track::Off;
            q->head = q->tail;
        }
}

bool complete(uint16_t device, uint32_t qpNum, bool receive, uint64_t wrId, uint64_t ts) {
    Table* t = t_table;
    if (!t || t->generation != agent::detail::g_generation) return false;
    WorkQueue* q = findQueue(t, keyOf(device, qpNum, receive));
    if (!q || q->head == q->tail) {
        if (q) q->track = Track::Off; // a request we did not follow (posted by another thread)
        return false;
    }
    Pending p = q->ring[q->head % kRingSize];
    if (p.wrId != wrId) {
        // Not the oldest: those before it completed elsewhere (or never will). Find it.
        q->track = Track::Off;
        uint32_t at = q->head + 1;
        while (at != q->tail && q->ring[at % kRingSize].wrId != wrId) ++at;
        if (at == q->tail) {
            q->head = q->tail; // none of them is ours to wait for any more: stop scanning them
            return false;
        }
        p = q->ring[at % kRingSize];
        q->head = at;
    }
    ++q->head;
    raw::RdmaRecord* a = p.aggregate; // counted with the requests of its own post's bucket
    if (!a) return false;
    uint64_t ns = uint64_t(((unsigned __int128)(ts - p.post) * g_nsPerTickQ32) >> 32);
    a->u.aggregate.completed++;
    a->u.aggregate.latency[latencyBin(ns)]++;
    extendTo(a, ts);
    return true;
}

void noteQp(uint16_t device, uint32_t qpNum, bool created, bool sigAll) {
    uint64_t key = keyOf(device, qpNum, false);
    unsigned s = slotOf(key, kSigAllSlots);
    for (int i = 0; i < kSigAllSlots; ++i) {
        std::atomic<uint64_t>& slot = g_sigAll[(s + unsigned(i)) % kSigAllSlots];
        uint64_t k = slot.load(std::memory_order_acquire);
        if (!created || !sigAll) {
            if (k == key) slot.store(1, std::memory_order_release); // deleted
            if (k == 0 || k == key) return;
            continue;
        }
        if ((k == 0 || k == 1) && slot.compare_exchange_strong(k, key, std::memory_order_acq_rel))
            return;
    }
}

} // namespace hpcprof::agent::ibverbs::fold
