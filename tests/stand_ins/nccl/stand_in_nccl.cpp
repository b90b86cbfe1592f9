// SPDX-License-Identifier: MIT
// TEST-ONLY stand-in for libnccl.so.2: the NCCL entry points hpcprof hooks, ABI-compatible with
// nccl.h (strong pnccl* definitions, weak nccl* aliases, like the real library), implemented on
// the CPU between processes through a POSIX shared-memory segment per communicator. Buffers are
// host memory and streams are ignored. Never linked into the product; it exists so the NCCL hooks
// can be tested with real multi-process collectives on machines without GPUs.
//
// Segment layout: Header | nranks data slots (kSlotBytes each) | nranks*nranks p2p mailboxes.
// Every collective is: copy in -> barrier -> compute from all slots -> barrier.
#include <nccl.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

constexpr size_t kSlotBytes = 256 * 1024;
constexpr size_t kMailBytes = 64 * 1024;
constexpr int kMaxRanks = 8;

struct Header {
    std::atomic<int> joined;
    std::atomic<int> count;
    std::atomic<int> generation;
    int colors[kMaxRanks];
    int keys[kMaxRanks];
};
struct Mailbox {
    std::atomic<int> full;
    size_t bytes;
    char data[kMailBytes];
};

} // namespace

struct ncclComm {
    int rank;
    int nranks;
    char name[96];
    char* base;
    size_t size;
    int splits;
    long inProgressPolls; ///< ncclCommGetAsyncError answers ncclInProgress this many more times (<0: always)
    Header* header() const { return reinterpret_cast<Header*>(base); }
    char* slot(int r) const { return base + sizeof(Header) + size_t(r) * kSlotBytes; }
    Mailbox* mailbox(int from, int to) const {
        return reinterpret_cast<Mailbox*>(slot(nranks) + sizeof(Mailbox) * size_t(from * nranks + to));
    }
};

namespace {

size_t typeSize(ncclDataType_t t) {
    switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
    }
}

void barrier(ncclComm* c) {
    Header* h = c->header();
    int gen = h->generation.load(std::memory_order_acquire);
    if (h->count.fetch_add(1, std::memory_order_acq_rel) + 1 == c->nranks) {
        h->count.store(0, std::memory_order_relaxed);
        h->generation.fetch_add(1, std::memory_order_acq_rel);
    } else {
        while (h->generation.load(std::memory_order_acquire) == gen) sched_yield();
    }
}

template <typename T> void combine(T* acc, const T* in, size_t n, ncclRedOp_t op) {
    for (size_t i = 0; i < n; ++i) switch (op) {
        case ncclProd: acc[i] = acc[i] * in[i]; break;
        case ncclMax: acc[i] = std::max(acc[i], in[i]); break;
        case ncclMin: acc[i] = std::min(acc[i], in[i]); break;
        default: acc[i] = acc[i] + in[i]; break; // sum, avg (divided at the end)
        }
}

// out = op over ranks of slot(r) + offsetBytes, n elements.
bool reduceSlots(ncclComm* c, void* out, size_t offsetBytes, size_t n, ncclDataType_t t,
                 ncclRedOp_t op) {
    size_t bytes = n * typeSize(t);
    std::vector<char> acc(c->slot(0) + offsetBytes, c->slot(0) + offsetBytes + bytes);
    for (int r = 1; r < c->nranks; ++r) {
        const char* in = c->slot(r) + offsetBytes;
        switch (t) {
        case ncclInt32: combine((int32_t*)acc.data(), (const int32_t*)in, n, op); break;
        case ncclInt64: combine((int64_t*)acc.data(), (const int64_t*)in, n, op); break;
        case ncclFloat32: combine((float*)acc.data(), (const float*)in, n, op); break;
        case ncclFloat64: combine((double*)acc.data(), (const double*)in, n, op); break;
        default: return false;
        }
    }
    if (op == ncclAvg) {
        if (t == ncclFloat32)
            for (size_t i = 0; i < n; ++i) ((float*)acc.data())[i] /= float(c->nranks);
        else if (t == ncclFloat64)
            for (size_t i = 0; i < n; ++i) ((double*)acc.data())[i] /= double(c->nranks);
    }
    std::memcpy(out, acc.data(), bytes);
    return true;
}

ncclResult_t join(ncclComm_t* out, const char* name, int nranks, int rank) {
    if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    auto* c = new ncclComm{};
    c->rank = rank;
    c->nranks = nranks;
    std::snprintf(c->name, sizeof(c->name), "%s", name);
    c->size = sizeof(Header) + size_t(nranks) * kSlotBytes + sizeof(Mailbox) * size_t(nranks * nranks);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, off_t(c->size)) != 0) return ncclSystemError;
    void* m = mmap(nullptr, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return ncclSystemError;
    c->base = static_cast<char*>(m);
    // A non-blocking communicator's pending operation, as a test wants it: how many polls of
    // ncclCommGetAsyncError answer ncclInProgress before ncclSuccess (-1: it never completes).
    const char* pending = std::getenv("HPCPROF_STAND_IN_NCCL_IN_PROGRESS");
    c->inProgressPolls = pending ? std::atol(pending) : 0;
    c->header()->joined.fetch_add(1);
    while (c->header()->joined.load() < nranks) sched_yield();
    *out = c;
    return ncclSuccess;
}

void nameFor(char* out, size_t cap, const ncclUniqueId& id) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char ch : id.internal) h = (h ^ uint8_t(ch)) * 0x100000001b3ull;
    std::snprintf(out, cap, "/hpcprof-standin-nccl-%016llx", (unsigned long long)h);
}

bool sizeOk(size_t bytes) { return bytes <= kSlotBytes; }

} // namespace

extern "C" {

ncclResult_t pncclGetVersion(int* version) {
    *version = 22809;
    return ncclSuccess;
}

ncclResult_t pncclGetUniqueId(ncclUniqueId* id) {
    std::memset(id, 0, sizeof(*id));
    int fd = open("/dev/urandom", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, id->internal, 16) : -1;
    if (fd >= 0) close(fd);
    if (n != 16) return ncclSystemError;
    pid_t pid = getpid();
    std::memcpy(id->internal + 16, &pid, sizeof(pid));
    return ncclSuccess;
}

const char* pncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "stand-in error"; }

ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
    char name[96];
    nameFor(name, sizeof(name), id);
    return join(comm, name, nranks, rank);
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                     ncclConfig_t*) {
    return pncclCommInitRank(comm, nranks, id, rank);
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t*) {
    Header* h = comm->header();
    h->colors[comm->rank] = color;
    h->keys[comm->rank] = key;
    barrier(comm);
    std::vector<std::pair<std::pair<int, int>, int>> members; // ((key, rank), rank)
    for (int r = 0; r < comm->nranks; ++r)
        if (h->colors[r] == color) members.push_back({{h->keys[r], r}, r});
    barrier(comm); // colors may be overwritten by the next split only after everyone read them
    int split = comm->splits++;
    if (color == NCCL_SPLIT_NOCOLOR) {
        *newcomm = nullptr;
        return ncclSuccess;
    }
    std::sort(members.begin(), members.end());
    int newRank = 0;
    for (size_t i = 0; i < members.size(); ++i)
        if (members[i].second == comm->rank) newRank = int(i);
    char name[128];
    std::snprintf(name, sizeof(name), "%.80s-s%d-c%d", comm->name, split, color);
    return join(newcomm, name, int(members.size()), newRank);
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
    *count = comm->nranks;
    return ncclSuccess;
}
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
    *rank = comm->rank;
    return ncclSuccess;
}
ncclResult_t pncclCommCuDevice(const ncclComm_t, int* device) {
    *device = 0;
    return ncclSuccess;
}
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
    if (!comm || !asyncError) return ncclInvalidArgument;
    bool pending = comm->inProgressPolls != 0;
    if (comm->inProgressPolls > 0) --comm->inProgressPolls;
    *asyncError = pending ? ncclInProgress : ncclSuccess;
    return ncclSuccess;
}
ncclResult_t pncclCommFinalize(ncclComm_t) { return ncclSuccess; }
ncclResult_t pncclCommDestroy(ncclComm_t comm) {
    if (!comm) return ncclInvalidArgument;
    barrier(comm);
    if (comm->rank == 0) shm_unlink(comm->name);
    munmap(comm->base, comm->size);
    delete comm;
    return ncclSuccess;
}
ncclResult_t pncclCommAbort(ncclComm_t comm) {
    if (!comm) return ncclInvalidArgument;
    munmap(comm->base, comm->size);
    delete comm;
    return ncclSuccess;
}

ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (!sizeOk(bytes)) return ncclInvalidArgument;
    std::memcpy(comm->slot(comm->rank), sendbuff, bytes);
    barrier(comm);
    bool ok = reduceSlots(comm, recvbuff, 0, count, datatype, op);
    barrier(comm);
    return ok ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (!sizeOk(bytes) || root < 0 || root >= comm->nranks) return ncclInvalidArgument;
    if (comm->rank == root) std::memcpy(comm->slot(root), sendbuff, bytes);
    barrier(comm);
    std::memcpy(recvbuff, comm->slot(root), bytes);
    barrier(comm);
    return ncclSuccess;
}

ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
    return pncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (!sizeOk(bytes) || root < 0 || root >= comm->nranks) return ncclInvalidArgument;
    std::memcpy(comm->slot(comm->rank), sendbuff, bytes);
    barrier(comm);
    bool ok = comm->rank != root || reduceSlots(comm, recvbuff, 0, count, datatype, op);
    barrier(comm);
    return ok ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = sendcount * typeSize(datatype);
    if (!sizeOk(bytes)) return ncclInvalidArgument;
    std::memcpy(comm->slot(comm->rank), sendbuff, bytes);
    barrier(comm);
    for (int r = 0; r < comm->nranks; ++r)
        std::memcpy(static_cast<char*>(recvbuff) + size_t(r) * bytes, comm->slot(r), bytes);
    barrier(comm);
    return ncclSuccess;
}

ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = recvcount * typeSize(datatype);
    if (!sizeOk(bytes * size_t(comm->nranks))) return ncclInvalidArgument;
    std::memcpy(comm->slot(comm->rank), sendbuff, bytes * size_t(comm->nranks));
    barrier(comm);
    bool ok = reduceSlots(comm, recvbuff, bytes * size_t(comm->rank), recvcount, datatype, op);
    barrier(comm);
    return ok ? ncclSuccess : ncclInvalidArgument;
}

ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (!sizeOk(bytes * size_t(comm->nranks))) return ncclInvalidArgument;
    std::memcpy(comm->slot(comm->rank), sendbuff, bytes * size_t(comm->nranks));
    barrier(comm);
    for (int r = 0; r < comm->nranks; ++r)
        std::memcpy(static_cast<char*>(recvbuff) + size_t(r) * bytes,
                    comm->slot(r) + size_t(comm->rank) * bytes, bytes);
    barrier(comm);
    return ncclSuccess;
}

ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (!sizeOk(bytes)) return ncclInvalidArgument;
    std::memcpy(comm->slot(comm->rank), sendbuff, bytes);
    barrier(comm);
    if (comm->rank == root)
        for (int r = 0; r < comm->nranks; ++r)
            std::memcpy(static_cast<char*>(recvbuff) + size_t(r) * bytes, comm->slot(r), bytes);
    barrier(comm);
    return ncclSuccess;
}

ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t) {
    if (!comm) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (!sizeOk(bytes * size_t(comm->nranks))) return ncclInvalidArgument;
    if (comm->rank == root) std::memcpy(comm->slot(root), sendbuff, bytes * size_t(comm->nranks));
    barrier(comm);
    std::memcpy(recvbuff, comm->slot(root) + size_t(comm->rank) * bytes, bytes);
    barrier(comm);
    return ncclSuccess;
}

ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t) {
    if (!comm || peer < 0 || peer >= comm->nranks) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    if (bytes > kMailBytes) return ncclInvalidArgument;
    Mailbox* m = comm->mailbox(comm->rank, peer);
    while (m->full.load(std::memory_order_acquire)) sched_yield();
    std::memcpy(m->data, sendbuff, bytes);
    m->bytes = bytes;
    m->full.store(1, std::memory_order_release);
    return ncclSuccess;
}

ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t) {
    if (!comm || peer < 0 || peer >= comm->nranks) return ncclInvalidArgument;
    size_t bytes = count * typeSize(datatype);
    Mailbox* m = comm->mailbox(peer, comm->rank);
    while (!m->full.load(std::memory_order_acquire)) sched_yield();
    std::memcpy(recvbuff, m->data, std::min(bytes, m->bytes));
    m->full.store(0, std::memory_order_release);
    return ncclSuccess;
}

// Operations run eagerly (one-slot mailboxes make send-then-recv rings safe), so groups only
// have to exist.
ncclResult_t pncclGroupStart() { return ncclSuccess; }
ncclResult_t pncclGroupEnd() { return ncclSuccess; }

#define HPCPROF_STAND_IN_ALIAS(name) __attribute__((weak, alias("p" #name)))
ncclResult_t ncclGetVersion(int*) HPCPROF_STAND_IN_ALIAS(ncclGetVersion);
ncclResult_t ncclGetUniqueId(ncclUniqueId*) HPCPROF_STAND_IN_ALIAS(ncclGetUniqueId);
const char* ncclGetErrorString(ncclResult_t) HPCPROF_STAND_IN_ALIAS(ncclGetErrorString);
ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int) HPCPROF_STAND_IN_ALIAS(ncclCommInitRank);
ncclResult_t ncclCommInitRankConfig(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*)
    HPCPROF_STAND_IN_ALIAS(ncclCommInitRankConfig);
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) HPCPROF_STAND_IN_ALIAS(ncclCommSplit);
ncclResult_t ncclCommCount(const ncclComm_t, int*) HPCPROF_STAND_IN_ALIAS(ncclCommCount);
ncclResult_t ncclCommUserRank(const ncclComm_t, int*) HPCPROF_STAND_IN_ALIAS(ncclCommUserRank);
ncclResult_t ncclCommCuDevice(const ncclComm_t, int*) HPCPROF_STAND_IN_ALIAS(ncclCommCuDevice);
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t*) HPCPROF_STAND_IN_ALIAS(ncclCommGetAsyncError);
ncclResult_t ncclCommFinalize(ncclComm_t) HPCPROF_STAND_IN_ALIAS(ncclCommFinalize);
ncclResult_t ncclCommDestroy(ncclComm_t) HPCPROF_STAND_IN_ALIAS(ncclCommDestroy);
ncclResult_t ncclCommAbort(ncclComm_t) HPCPROF_STAND_IN_ALIAS(ncclCommAbort);
ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                           cudaStream_t) HPCPROF_STAND_IN_ALIAS(ncclAllReduce);
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                           cudaStream_t) HPCPROF_STAND_IN_ALIAS(ncclBroadcast);
ncclResult_t ncclBcast(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclBcast);
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                        cudaStream_t) HPCPROF_STAND_IN_ALIAS(ncclReduce);
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclAllGather);
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                               cudaStream_t) HPCPROF_STAND_IN_ALIAS(ncclReduceScatter);
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclAlltoAll);
ncclResult_t ncclGather(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclGather);
ncclResult_t ncclScatter(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclScatter);
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclSend);
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
    HPCPROF_STAND_IN_ALIAS(ncclRecv);
ncclResult_t ncclGroupStart() HPCPROF_STAND_IN_ALIAS(ncclGroupStart);
ncclResult_t ncclGroupEnd() HPCPROF_STAND_IN_ALIAS(ncclGroupEnd);

} // extern "C"
