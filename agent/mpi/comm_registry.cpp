// SPDX-License-Identifier: MIT
#include "comm_registry.hpp"

#include "handle_map.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpi_abi.hpp"
#include "hpcprof/schema/raw/common.hpp"
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
RealMpi<int (*)(MPI_Comm, int*)> g_testInter("PMPI_Comm_test_inter");
RealMpi<int (*)(MPI_Comm, int*)> g_remoteSize("PMPI_Comm_remote_size");
RealMpi<int (*)(MPI_Comm, MPI_Group*)> g_commGroup("PMPI_Comm_group");
RealMpi<int (*)(MPI_Comm, MPI_Group*)> g_remoteGroup("PMPI_Comm_remote_group");
RealMpi<int (*)(MPI_Group, int, const int*, MPI_Group, int*)> g_translate(
    "PMPI_Group_translate_ranks");
RealMpi<int (*)(MPI_Group*)> g_groupFree("PMPI_Group_free");

// Size, rank and, for an intercommunicator, the remote group's size (the ranks its calls name).
void fillSizeAndRank(CommInfo* info) {
    auto size = g_commSize.get();
    auto rank = g_commRank.get();
    auto testInter = g_testInter.get();
    auto remoteSize = g_remoteSize.get();
    if (!size || size(info->handle, &info->size) != MPI_SUCCESS) info->size = -1;
    if (!rank || rank(info->handle, &info->myRank) != MPI_SUCCESS) info->myRank = -1;
    info->peerSize = info->size;
    int flag = 0;
    if (!testInter || !remoteSize || testInter(info->handle, &flag) != MPI_SUCCESS || !flag) return;
    int remote = -1;
    info->inter = true;
    if (remoteSize(info->handle, &remote) != MPI_SUCCESS || remote < 0 || info->size < 0) {
        info->peerSize = -1;
        return;
    }
    info->peerSize = remote;
    info->size += remote;
}

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

void setKey(CommInfo* info, const char* key) {
    size_t n = strnlen(key, sizeof(info->key) - 1); // callers pass keys that fit
    std::memcpy(info->key, key, n);
    info->key[n] = '\0';
    info->keyId = hpcprof_agent_intern(info->key, std::strlen(info->key));
}

CommInfo* makeInfo(MPI_Comm comm, const char* key) {
    auto* info = static_cast<CommInfo*>(std::calloc(1, sizeof(CommInfo)));
    if (!info) return nullptr;
    info->handle = comm;
    fillSizeAndRank(info);
    if (key) setKey(info, key);
    return info;
}

/// World ranks of the `n` members of `g`, in group order (malloc'ed; nullptr if unknown). Uses
/// the real functions, not our wrappers.
int* worldRanksOfGroup(MPI_Group g, int n) {
    auto translate = g_translate.get();
    auto group = g_commGroup.get();
    auto groupFree = g_groupFree.get();
    if (n <= 0 || !translate || !group || !groupFree) return nullptr;
    MPI_Group wg;
    if (group(worldComm(), &wg) != MPI_SUCCESS) return nullptr;
    int* local = static_cast<int*>(std::malloc(sizeof(int) * size_t(n)));
    int* world = static_cast<int*>(std::malloc(sizeof(int) * size_t(n)));
    if (local && world) {
        for (int i = 0; i < n; ++i) local[i] = i;
        if (translate(g, n, local, wg, world) != MPI_SUCCESS) std::free(world), world = nullptr;
    } else {
        std::free(world), world = nullptr;
    }
    std::free(local);
    groupFree(&wg);
    return world;
}

/// World ranks of the local group (`remote` false) or of an intercommunicator's remote group.
int* worldRanksOf(const CommInfo* info, bool remote) {
    auto getGroup = remote ? g_remoteGroup.get() : g_commGroup.get();
    auto groupFree = g_groupFree.get();
    int n = remote ? info->peerSize : (info->inter ? info->size - info->peerSize : info->size);
    MPI_Group g;
    if (!g_world || !getGroup || !groupFree || n <= 0 || getGroup(info->handle, &g) != MPI_SUCCESS)
        return nullptr;
    int* world = worldRanksOfGroup(g, n);
    groupFree(&g);
    return world;
}

// The world ranks of the ranks the calls name: the group, or the remote group.
void fillWorldRanks(CommInfo* info) {
    if (info->peerSize > 0) info->worldRanks = worldRanksOf(info, info->inter);
}

int minOf(const int* v, int n) {
    int m = -1;
    for (int i = 0; v && i < n; ++i)
        if (m < 0 || v[i] < m) m = v[i];
    return m;
}

/// The world rank that tells apart communicators created by one call: the first member of an
/// intracommunicator; the lowest world rank of both groups of an intercommunicator (the two
/// groups must agree, and each group's first member is a different process).
int firstMember(const CommInfo* info) {
    if (!info->inter) return info->worldRanks && info->size > 0 ? info->worldRanks[0] : -1;
    int* local = worldRanksOf(info, false);
    int a = minOf(local, info->size - info->peerSize);
    int b = minOf(info->worldRanks, info->peerSize);
    std::free(local);
    return a < 0 ? b : (b < 0 || a < b ? a : b);
}

uint64_t fnv1a(const char* s) {
    uint64_t h = 1469598103934665603ull;
    for (const char* c = s; *c; ++c) h = (h ^ uint8_t(*c)) * 1099511628211ull;
    return h;
}

/// Appends `n` world ranks, sorted, as ranges ("0-3,6") to `out` (of `cap` bytes at `len`).
/// Sorting in place is fine: the caller owns `v`.
void appendRanges(int* v, int n, char* out, size_t cap, size_t& len) {
    std::sort(v, v + n);
    for (int i = 0; i < n && len < cap;) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1) ++j;
        int w = j > i ? std::snprintf(out + len, cap - len, "%s%d-%d", i ? "," : "", v[i], v[j])
                      : std::snprintf(out + len, cap - len, "%s%d", i ? "," : "", v[i]);
        len += size_t(w > 0 ? w : 0);
        i = j + 1;
    }
}

/// Members of `info` as "(<ranges>)" or, for an intercommunicator, "(<group>|<group>)" with the
/// group holding the lower world rank first, so both groups write the same text.
void describeMembers(const CommInfo* info, char* out, size_t cap) {
    int* a = worldRanksOf(info, false);
    int na = a ? (info->inter ? info->size - info->peerSize : info->size) : 0;
    int* b = nullptr;
    int nb = 0;
    if (info->inter && info->worldRanks) {
        b = static_cast<int*>(std::malloc(sizeof(int) * size_t(info->peerSize)));
        if (b) std::memcpy(b, info->worldRanks, sizeof(int) * size_t(nb = info->peerSize));
    }
    if (info->inter && minOf(b, nb) < minOf(a, na)) std::swap(a, b), std::swap(na, nb);
    size_t len = 1;
    std::snprintf(out, cap, "(");
    appendRanges(a, na, out, cap, len);
    if (info->inter && len < cap) len += size_t(std::snprintf(out + len, cap - len, "|"));
    appendRanges(b, nb, out, cap, len);
    if (len < cap) std::snprintf(out + len, cap - len, ")");
    std::free(a);
    std::free(b);
}

/// How many communicators with this member text were registered before (all their members took
/// part in each, in the same order, so every member counts alike).
uint32_t takeMembersCount(uint64_t hash) {
    static uint64_t hashes[256];
    static uint32_t counts[256];
    lock();
    uint32_t k = 0;
    for (size_t i = hash % 256, n = 0; n < 256; ++n, i = (i + 1) % 256) {
        if (hashes[i] == hash || hashes[i] == 0) {
            hashes[i] = hash;
            k = counts[i]++;
            break;
        }
    }
    unlock();
    return k;
}

/// Replaces a key too long to store by a hash of it, which every member computes alike (a cut
/// key could make two communicators one).
void setKeyOrHash(CommInfo* info, const char* full, int n, const char* hashPrefix, int first) {
    if (n >= 0 && size_t(n) < sizeof(info->key)) {
        setKey(info, full);
        return;
    }
    char key[sizeof(info->key)];
    std::snprintf(key, sizeof(key), "%s#%016llx@%d", hashPrefix,
                  static_cast<unsigned long long>(fnv1a(full)), first);
    setKey(info, key);
}

} // namespace

void registerPredefinedComms(int worldRank, int worldSize) {
    g_world = makeInfo(worldComm(), "world");
    if (!g_world) return;
    g_world->size = g_world->peerSize = worldSize;
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
    // Not seen being created: a key of this process only (not comparable across ranks), which
    // the analysis reports by name.
    static uint32_t unknown = 0;
    char key[64];
    std::snprintf(key, sizeof(key), "%s%d.%u", schema::raw::kUnknownCommunicatorPrefix,
                  g_world ? g_world->myRank : -1, __atomic_fetch_add(&unknown, 1, __ATOMIC_RELAXED));
    CommInfo* info = makeInfo(comm, key);
    if (!info) return nullptr;
    fillWorldRanks(info);
    insert(info);
    return info;
}

CommInfo* registerChildComm(CommInfo* parent, uint32_t creationIndex, MPI_Comm child,
                            const char* suffix) {
    if (child == nullComm()) return nullptr;
    CommInfo* info = makeInfo(child, nullptr);
    if (!info) return nullptr;
    fillWorldRanks(info);
    int first = firstMember(info);
    char full[sizeof(info->key) + 128];
    int n = std::snprintf(full, sizeof(full), "%s.%u%.32s@%d", parent ? parent->key : "unknown",
                          creationIndex, suffix ? suffix : "", first);
    setKeyOrHash(info, full, n, "", first);
    insert(info);
    return info;
}

CommInfo* registerByMembers(MPI_Comm comm, const char* prefix, const char* tag) {
    if (comm == nullComm()) return nullptr;
    CommInfo* info = makeInfo(comm, nullptr);
    if (!info) return nullptr;
    fillWorldRanks(info);
    char members[1024];
    describeMembers(info, members, sizeof(members));
    char desc[1200];
    std::snprintf(desc, sizeof(desc), "%s%s%s%.64s%s", prefix, members, tag ? "[" : "",
                  tag ? tag : "", tag ? "]" : "");
    uint64_t hash = fnv1a(desc);
    uint32_t k = takeMembersCount(hash ? hash : 1);
    char full[1300];
    int n = std::snprintf(full, sizeof(full), "%s.%u", desc, k);
    setKeyOrHash(info, full, n, prefix, firstMember(info));
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
    if (rank == MPI_ROOT && info && info->inter) return g_world ? g_world->myRank : -1;
    if (rank < 0) return -1;
    if (!info || !info->worldRanks) return rank;
    return rank < info->peerSize ? info->worldRanks[rank] : -1;
}

} // namespace hpcprof::agent::mpi
