// SPDX-License-Identifier: MIT
#include "request_registry.hpp"

#include "handle_map.hpp"

namespace hpcprof::agent::mpi {

namespace {

constexpr size_t kSlots = 1 << 15;

struct Slot {
    uintptr_t handle; // 0 = empty; written by CAS
    RequestInfo info;
    int ready;        // info written
};
// Constant-initialized (all zero: in .bss), so that its 2.3 MB stay untouched until used. As a
// plain definition, RequestInfo's member initializers made it a loop at load that wrote every
// slot: 576 pages faulted in every process that loads the MPI agent, and in the CLI.
constinit Slot g_slots[kSlots]{};
uint32_t g_nextRequest = 0;
int64_t g_pendingReceives = 0; // see pendingReceives()
bool g_receivesShared = true;   // false: one thread at a time (countReceivesUnshared)

size_t hashOf(uintptr_t h) { return size_t((h * 0x9E3779B97F4A7C15ull) >> 49) % kSlots; }

/// Whether `info` is a receive that can still complete (a persistent one only while started).
bool isPendingReceive(const RequestInfo& info) {
    return info.kind == RequestKind::Recv && (!info.persistent || info.active);
}

void countReceive(const RequestInfo& info, int64_t delta) {
    if (!isPendingReceive(info)) return;
    if (__atomic_load_n(&g_receivesShared, __ATOMIC_RELAXED))
        __atomic_fetch_add(&g_pendingReceives, delta, __ATOMIC_RELAXED);
    else // MPI calls ordered by the program: no other thread changes the count meanwhile
        __atomic_store_n(&g_pendingReceives,
                         __atomic_load_n(&g_pendingReceives, __ATOMIC_RELAXED) + delta,
                         __ATOMIC_RELAXED);
}

} // namespace

uint32_t& nextRequestNumberCounter() { return g_nextRequest; }

uint32_t nextRequestNumber() { return __atomic_fetch_add(&g_nextRequest, 1u, __ATOMIC_RELAXED); }

void rememberRequest(MPI_Request request, const RequestInfo& info) {
    uintptr_t h = handleBits(request);
    if (!h) return;
    size_t i = hashOf(h);
    for (size_t n = 0; n < 64; ++n, i = (i + 1) % kSlots) {
        uintptr_t expected = 0;
        if (__atomic_compare_exchange_n(&g_slots[i].handle, &expected, h, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            g_slots[i].info = info;
            __atomic_store_n(&g_slots[i].ready, 1, __ATOMIC_RELEASE);
            countReceive(info, 1);
            return;
        }
    }
}

namespace {

/// The slot holding `h`, or nullptr. MPI forbids concurrent use of one request, so the caller
/// may read and change the slot's info without further synchronisation.
Slot* findSlot(uintptr_t h) {
    if (!h) return nullptr;
    size_t i = hashOf(h);
    for (size_t n = 0; n < 64; ++n, i = (i + 1) % kSlots) {
        if (__atomic_load_n(&g_slots[i].handle, __ATOMIC_ACQUIRE) != h) continue;
        if (!__atomic_load_n(&g_slots[i].ready, __ATOMIC_ACQUIRE)) continue;
        return &g_slots[i];
    }
    return nullptr;
}

void release(Slot* s) {
    __atomic_store_n(&s->ready, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&s->handle, uintptr_t(0), __ATOMIC_RELEASE);
}

} // namespace

bool takeRequest(MPI_Request request, RequestInfo& out) {
    Slot* s = findSlot(handleBits(request));
    if (!s) return false;
    countReceive(s->info, -1);
    if (s->info.persistent) {
        if (!s->info.active) return false;
        s->info.active = false;
        out = s->info;
        return true;
    }
    out = s->info;
    release(s);
    return true;
}

const RequestInfo* pendingRequest(MPI_Request request) {
    const Slot* s = findSlot(handleBits(request));
    if (!s || (s->info.persistent && !s->info.active)) return nullptr;
    return &s->info;
}

bool startRequest(MPI_Request request, uint32_t number, RequestInfo& out) {
    Slot* s = findSlot(handleBits(request));
    if (!s || !s->info.persistent) return false;
    if (!s->info.active) {
        s->info.active = true;
        countReceive(s->info, 1);
    }
    s->info.request = number;
    out = s->info;
    return true;
}

void forgetRequest(MPI_Request request) {
    if (Slot* s = findSlot(handleBits(request))) {
        countReceive(s->info, -1);
        release(s);
    }
}

int64_t pendingReceives() { return __atomic_load_n(&g_pendingReceives, __ATOMIC_RELAXED); }

void countReceivesUnshared() { __atomic_store_n(&g_receivesShared, false, __ATOMIC_RELAXED); }

} // namespace hpcprof::agent::mpi
