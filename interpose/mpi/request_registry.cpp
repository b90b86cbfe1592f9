// SPDX-License-Identifier: MIT
#include "request_registry.hpp"

#include "handle_map.hpp"

namespace hpcprof::interpose::mpi {

namespace {

constexpr size_t kSlots = 1 << 15;

struct Slot {
    uintptr_t handle; // 0 = empty; written by CAS
    RequestInfo info;
    int ready;        // info written
};
Slot g_slots[kSlots];

size_t hashOf(uintptr_t h) { return size_t((h * 0x9E3779B97F4A7C15ull) >> 49) % kSlots; }

} // namespace

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
            return;
        }
    }
}

bool takeRequest(MPI_Request request, RequestInfo& out) {
    uintptr_t h = handleBits(request);
    if (!h) return false;
    size_t i = hashOf(h);
    for (size_t n = 0; n < 64; ++n, i = (i + 1) % kSlots) {
        if (__atomic_load_n(&g_slots[i].handle, __ATOMIC_ACQUIRE) != h) continue;
        if (!__atomic_load_n(&g_slots[i].ready, __ATOMIC_ACQUIRE)) continue;
        out = g_slots[i].info;
        __atomic_store_n(&g_slots[i].ready, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&g_slots[i].handle, uintptr_t(0), __ATOMIC_RELEASE);
        return true;
    }
    return false;
}

} // namespace hpcprof::interpose::mpi
