// SPDX-License-Identifier: MIT
#include "comm_registry.hpp"

#include "handle_map.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpi_abi.hpp"
#include "real_mpi.hpp"
#include "runtime/agent_abi.hpp"

namespace hpcprof::agent::mpi {

namespace {

constexpr int kSlots = 4096;
CommInfo* g_slots[kSlots]; // atomic access; nullptr = empty, kTombstone = freed
CommInfo* const kTombstone = reinterpret_cast<CommInfo*>(1);
int g_lock = 0;
CommInfo* g_world = nullptr;

RealMpi<int (*)(MPI_Comm, int*)> g_commSize("PMPI_Comm_size");
RealMpi<int (*)(MPI_Comm, int*)> g_commRank("PMPI_Comm_rank");

void fillSizeAndRank(CommInfo* info) {
    auto size = g_commSize.get();
    auto rank = g_commRank.get();
    if (!size || size(info->handle, &info->size) != MPI_SUCCESS) info->size = -1;
    if (!rank || rank(info->handle, &info->myRank) != MPI_SUCCESS) info->myRank = -1;
}
RealMpi<int (*)(MPI_Comm, MPI_Group*)> g_commGroup("PMPI_Comm_group");
RealMpi<int (*)(MPI_Group, int, const int*, MPI_Group, int*)> g_translate(
    "PMPI_Group_translate_ranks");
RealMpi<int (*)(MPI_Group*)> g_groupFree("PMPI_Group_free");

size_t slotOf(MPI_Comm comm) {
    uint64_t h = handleBits(comm) * 0x9E3779B97F4A7C15ull;
    return size_t(h >> 52) % kSlots;
}

void lock() {
    while (__atomic_exchange_n(&g_lock, 1, __ATOMIC_ACQUIRE)) {
    }
}
void unlock() { __atomic_store_n(&g_lock, 0, __ATOMIC_RELEASE); }

void insert(CommInfo* info) {
    lock();
    size_t i = slotOf(info->handle);
    for (int n = 0; n < kSlots; ++n, i = (i + 1) % kSlots) {
        CommInfo* cur = __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE);
        if (!cur || cur == kTombstone || cur->handle == info->handle) {
            __atomic_store_n(&g_slots[i], info, __ATOMIC_RELEASE);
            break;
        }
    }
    unlock();
}

CommInfo* makeInfo(MPI_Comm comm, const char* key) {
    auto* info = static_cast<CommInfo*>(std::calloc(1, sizeof(CommInfo)));
    if (!info) return nullptr;
    info->handle = comm;
    std::snprintf(info->key, sizeof(info->key), "%s", key);
    info->keyId = hpcprof_agent_intern(info->key, std::strlen(info->key));
    fillSizeAndRank(info);
    return info;
}

// World ranks of the members, via group translation (real functions, not our wrappers).
void fillWorldRanks(CommInfo* info) {
    if (info->size <= 0 || !g_world) return;
    auto group = g_commGroup.get();
    auto translate = g_translate.get();
    auto groupFree = g_groupFree.get();
    if (!group || !translate || !groupFree) return;
    MPI_Group g, wg;
    if (group(info->handle, &g) != MPI_SUCCESS) return;
    if (group(worldComm(), &wg) != MPI_SUCCESS) {
        groupFree(&g);
        return;
    }
    int* local = static_cast<int*>(std::malloc(sizeof(int) * size_t(info->size)));
    int* world = static_cast<int*>(std::malloc(sizeof(int) * size_t(info->size)));
    if (local && world) {
        for (int i = 0; i < info->size; ++i) local[i] = i;
        if (translate(g, info->size, local, wg, world) == MPI_SUCCESS)
            info->worldRanks = world, world = nullptr;
    }
    std::free(local);
    std::free(world);
    groupFree(&g);
    groupFree(&wg);
}

} // namespace

void registerPredefinedComms(int worldRank, int worldSize) {
    g_world = makeInfo(worldComm(), "world");
    if (!g_world) return;
    g_world->size = worldSize;
    insert(g_world);
    char key[64];
    std::snprintf(key, sizeof(key), "self@%d", worldRank);
    if (CommInfo* self = makeInfo(selfComm(), key)) {
        self->worldRanks = static_cast<int*>(std::malloc(sizeof(int)));
        if (self->worldRanks) self->worldRanks[0] = worldRank;
        insert(self);
    }
}

CommInfo* lookupComm(MPI_Comm comm) {
    if (g_world && comm == g_world->handle) [[likely]] return g_world;
    size_t i = slotOf(comm);
    for (int n = 0; n < kSlots; ++n, i = (i + 1) % kSlots) {
        CommInfo* cur = __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE);
        if (!cur) break;
        if (cur != kTombstone && cur->handle == comm) return cur;
    }
    // Not seen being created: keyed by its handle (not comparable across ranks).
    char key[64];
    std::snprintf(key, sizeof(key), "unmatched:%llx",
                  (unsigned long long)handleBits(comm));
    CommInfo* info = makeInfo(comm, key);
    if (!info) return nullptr;
    fillWorldRanks(info);
    insert(info);
    return info;
}

CommInfo* registerChildComm(CommInfo* parent, uint32_t creationIndex, MPI_Comm child,
                            const char* suffix) {
    if (child == nullComm()) return nullptr;
    auto* info = static_cast<CommInfo*>(std::calloc(1, sizeof(CommInfo)));
    if (!info) return nullptr;
    info->handle = child;
    fillSizeAndRank(info);
    fillWorldRanks(info);
    int first = info->worldRanks && info->size > 0 ? info->worldRanks[0] : -1;
    // Keys grow with the nesting depth; one that no longer fits is replaced by a hash of it,
    // which every member computes alike (a cut key could make two communicators one).
    char full[sizeof(info->key) + 128];
    int n = std::snprintf(full, sizeof(full), "%s.%u%.32s@%d", parent ? parent->key : "unknown",
                          creationIndex, suffix ? suffix : "", first);
    if (n >= 0 && size_t(n) < sizeof(info->key)) {
        std::memcpy(info->key, full, size_t(n) + 1);
    } else {
        uint64_t h = 1469598103934665603ull; // FNV-1a over the full key
        for (const char* c = full; *c; ++c) h = (h ^ uint8_t(*c)) * 1099511628211ull;
        std::snprintf(info->key, sizeof(info->key), "#%016llx@%d", static_cast<unsigned long long>(h),
                      first);
    }
    info->keyId = hpcprof_agent_intern(info->key, std::strlen(info->key));
    insert(info);
    return info;
}

void unregisterComm(MPI_Comm comm) {
    lock();
    size_t i = slotOf(comm);
    for (int n = 0; n < kSlots; ++n, i = (i + 1) % kSlots) {
        CommInfo* cur = __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE);
        if (!cur) break;
        // The info itself is never freed: a racing reader may still hold it.
        if (cur != kTombstone && cur->handle == comm && cur != g_world) {
            __atomic_store_n(&g_slots[i], kTombstone, __ATOMIC_RELEASE);
            break;
        }
    }
    unlock();
}

int worldRankOf(const CommInfo* info, int rank) {
    if (rank < 0) return -1;
    if (!info || !info->worldRanks) return rank;
    return rank < info->size ? info->worldRanks[rank] : -1;
}

} // namespace hpcprof::agent::mpi
