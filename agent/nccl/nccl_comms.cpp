// SPDX-License-Identifier: MIT
#include "nccl_comms.hpp"

#include <cstddef>

#include "runtime/recorder.hpp"

namespace hpcprof::agent::nccl {

namespace {

constexpr size_t kSlots = 1024; // power of two
void* const kTombstone = reinterpret_cast<void*>(uintptr_t(1)); // destroyed: reusable
void* const kBusy = reinterpret_cast<void*>(uintptr_t(2));      // being filled in
CommState g_table[kSlots];

size_t slotOf(void* comm) {
    uintptr_t p = reinterpret_cast<uintptr_t>(comm);
    return size_t((p >> 4) * 0x9e3779b97f4a7c15ull >> 54) & (kSlots - 1);
}

char hexDigit(unsigned v) { return char(v < 10 ? '0' + v : 'a' + v - 10); }

} // namespace

uint64_t hashBytes(const void* data, uint64_t len, uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = seed;
    for (uint64_t i = 0; i < len; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

CommState* addComm(void* comm, uint64_t keyHash, int rank, int size) {
    if (!comm) return nullptr;
    char key[5 + 16];
    key[0] = 'n', key[1] = 'c', key[2] = 'c', key[3] = 'l', key[4] = ':';
    for (int i = 0; i < 16; ++i) key[5 + i] = hexDigit(unsigned(keyHash >> (60 - 4 * i)) & 0xf);
    uint32_t keyId = agent::internString(key, sizeof(key));
    size_t s = slotOf(comm);
    for (size_t n = 0; n < kSlots; ++n, s = (s + 1) & (kSlots - 1)) {
        CommState& c = g_table[s];
        void* cur = __atomic_load_n(&c.comm, __ATOMIC_ACQUIRE);
        if (cur == comm) return &c; // re-registered (the same pointer reused)
        if (cur != nullptr && cur != kTombstone) continue;
        if (!__atomic_compare_exchange_n(&c.comm, &cur, kBusy, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            continue;
        c.keyHash = keyHash;
        c.keyId = keyId;
        c.rank = rank;
        c.size = size;
        __atomic_store_n(&c.nextSeq, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&c.splits, 0u, __ATOMIC_RELAXED);
        __atomic_store_n(&c.comm, comm, __ATOMIC_RELEASE); // published last
        return &c;
    }
    return nullptr;
}

CommState* findComm(void* comm) {
    if (!comm) return nullptr;
    size_t s = slotOf(comm);
    for (size_t n = 0; n < kSlots; ++n, s = (s + 1) & (kSlots - 1)) {
        void* cur = __atomic_load_n(&g_table[s].comm, __ATOMIC_ACQUIRE);
        if (cur == comm) return &g_table[s];
        if (cur == nullptr) return nullptr;
    }
    return nullptr;
}

void removeComm(void* comm) {
    if (CommState* c = findComm(comm)) __atomic_store_n(&c->comm, kTombstone, __ATOMIC_RELEASE);
}

} // namespace hpcprof::agent::nccl
