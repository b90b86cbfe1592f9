// SPDX-License-Identifier: MIT
// NCCL API hooks (LD_PRELOAD): every collective, point-to-point, group and communicator call is
// timed around the next definition (libnccl's weak nccl* -> strong pnccl*), with communicator key,
// rank, size, per-communicator instance number, datatype, op, count and stream. Around the real
// call a CUPTI external correlation id is pushed, so GPU kernels launched inside it (or inside
// the ncclGroupEnd that launches a group) are tied to the call.
//
// Hooks are noexcept, lock-free and allocation-free; their result is the real call's. Thread-safe.
// Not async-signal-safe (neither is NCCL).
#include <nccl.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>

#include "common/real_function.hpp"
#include "counters/boundary.hpp"
#include "cupti/external_correlation.hpp"
#include "nccl_comms.hpp"
#include "runtime/polling_state.hpp"
#include "runtime/recorder.hpp"

namespace {

using hpcprof::schema::Op;
namespace raw = hpcprof::schema::raw;
namespace agent = hpcprof::agent;
namespace cupti = hpcprof::agent::cupti;
using namespace hpcprof::agent::nccl;

thread_local uint32_t t_groupDepth = 0;
thread_local uint32_t t_groupCounter = 0;
thread_local uint32_t t_currentGroup = 0;

struct Call {
    Op op;
    ncclComm_t comm = nullptr;
    uint64_t count = 0; ///< element count of a call
    int datatype = -1;
    int redop = -1;
    int32_t peer = -1;
    cudaStream_t stream = nullptr;
    bool collective = false;
    uint64_t nranks = 0; ///< communicator creation: its size (the record's init payload)
};

uint8_t small(int v) { return v < 0 ? 255 : uint8_t(v); }

/// Bytes of one element of `t`, 0 = unknown.
int64_t elementBytes(int t) {
    switch (t) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return t == ncclFloat8e4m3 || t == ncclFloat8e5m2 ? 1 : 0;
    }
}

/// Publishes the NCCL call `c` as the call the thread is inside (runtime/in_flight.hpp): the
/// communicator's key and size, the collective instance, the peer or root, the bytes of `count`
/// elements. Real NCCL returns at enqueue, so this shows the calls that block on the host:
/// creation, ncclGroupEnd, teardown, a collective waiting for a full queue.
raw::InFlightCall* publish(const Call& c, const CommState* st, uint32_t seq, uint64_t t0) {
    raw::InFlightCall f = agent::inFlightCall(c.op, t0);
    f.peer = c.peer;
    if (st) {
        f.commId = st->keyId;
        f.tag = st->size;
        f.flags = raw::kFlagTagIsCommSize;
    }
    if (seq != raw::kNoSeq) {
        f.flags |= raw::kFlagSeqValid;
        f.instance = seq;
    }
    if (int64_t e = elementBytes(c.datatype); e > 0) f.bytes = e * int64_t(c.count);
    return agent::beginCall(f);
}

void write(const Call& c, const CommState* st, uint32_t seq, uint64_t t0, uint64_t t1,
           ncclResult_t result, uint64_t externalId) {
    auto* r = reinterpret_cast<raw::NcclRecord*>(agent::reserveEvent());
    if (!r) return;
    r->result = uint8_t(result);
    r->op = uint16_t(c.op);
    r->datatype = small(c.datatype);
    r->redop = c.redop < 0 ? 255 : c.redop >= int(ncclNumOps) ? 5 : uint8_t(c.redop);
    r->groupDepth = uint8_t(t_groupDepth > 255 ? 255 : t_groupDepth);
    r->flags = 0;
    r->start = t0;
    r->end = t1;
    if (c.nranks)
        r->u.init = {c.nranks, 0};
    else
        r->u.call = {c.count, uint64_t(reinterpret_cast<uintptr_t>(c.stream))};
    r->externalId = externalId;
    r->commKeyId = st ? st->keyId : 0;
    r->seq = seq;
    r->peer = c.peer;
    r->group = t_currentGroup;
    __atomic_store_n(&r->kind, raw::RecordKind::Nccl, __ATOMIC_RELEASE);
}

/// Times `call` and records it. The instance number is taken before the call so that a
/// collective that fails still consumes it on every rank alike.
template <typename F> ncclResult_t traced(const Call& c, F&& call) {
    if (!agent::recording(agent::SourceBit::Nccl)) return call();
    CommState* st = findComm(c.comm);
    uint32_t seq = raw::kNoSeq;
    if (c.collective && st) seq = __atomic_fetch_add(&st->nextSeq, 1u, __ATOMIC_RELAXED);
    uint64_t ext = cupti::nextExternalId();
    cupti::pushExternalId(ext);
    // CPU counters at the call's boundaries (HPCPROF_COUNTER_BOUNDARIES=nccl).
    bool armed = agent::counters::samplesRegion(agent::counters::kCounterBoundaryNccl);
    uint64_t t0 = agent::counters::startAfterEntrySample(armed, agent::now(), agent::now);
    raw::InFlightCall* line = publish(c, st, seq, t0);
    ncclResult_t r = call();
    uint64_t t1 = agent::now();
    agent::endCall(line);
    agent::counters::sampleExitAt(armed, t1);
    cupti::popExternalId();
    write(c, st, seq, t0, t1, r, ext);
    return r;
}

ncclResult_t missing() { return ncclSystemError; }

bool created(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

// Records a communicator creation once the real call has produced `comm`.
template <typename F>
ncclResult_t tracedCreate(Op op, F&& call, ncclComm_t* out, auto&& keyAndShape) {
    if (!agent::recording(agent::SourceBit::Nccl)) return call();
    uint64_t t0 = agent::now();
    raw::InFlightCall* line = agent::beginCall(agent::inFlightCall(op, t0));
    ncclResult_t r = call();
    uint64_t t1 = agent::now();
    agent::endCall(line);
    Call c{op};
    CommState* st = nullptr;
    if (created(r) && out && *out) {
        auto [hash, rank, size] = keyAndShape();
        st = addComm(*out, hash, rank, size);
        c.nranks = uint64_t(size);
        c.peer = rank;
    }
    write(c, st, raw::kNoSeq, t0, t1, r, 0);
    return r;
}

struct Shape {
    uint64_t hash;
    int rank;
    int size;
};

/// The real NCCL function behind a hook. RTLD_NEXT finds libnccl when it is in the global
/// scope (linked by the program); a framework that dlopens its extension with RTLD_LOCAL (Python
/// does) keeps libnccl out of it, so fall back to the already-loaded libnccl itself (RTLD_NOLOAD)
/// and its strong pnccl* definition. Resolved once; racing resolvers store the same value.
template <typename Fn> class NcclFunction {
public:
    constexpr NcclFunction(const char* name, const char* pname) : m_name(name), m_pname(pname) {}
    Fn get() {
        Fn fn = __atomic_load_n(&m_fn, __ATOMIC_ACQUIRE);
        if (fn) [[likely]] return fn;
        fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, m_name));
        if (!fn)
            for (const char* lib : {"libnccl.so.2", "libnccl.so"})
                if (void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) {
                    fn = reinterpret_cast<Fn>(dlsym(h, m_pname));
                    if (!fn) fn = reinterpret_cast<Fn>(dlsym(h, m_name));
                    dlclose(h); // NOLOAD took a reference; the library stays loaded
                    if (fn) break;
                }
        if (fn) __atomic_store_n(&m_fn, fn, __ATOMIC_RELEASE);
        else if (!__atomic_exchange_n(&m_reported, true, __ATOMIC_ACQ_REL))
            agent::countUnresolvedHook();
        return fn;
    }

private:
    const char* m_name;
    const char* m_pname;
    Fn m_fn = nullptr;
    bool m_reported = false;
};

NcclFunction<decltype(&ncclCommCount)> g_commCount("ncclCommCount", "pncclCommCount");
NcclFunction<decltype(&ncclCommUserRank)> g_commUserRank("ncclCommUserRank", "pncclCommUserRank");

Shape shapeOf(ncclComm_t comm, uint64_t hash) {
    int rank = -1, size = -1;
    if (auto f = g_commUserRank.get()) f(comm, &rank);
    if (auto f = g_commCount.get()) f(comm, &size);
    return {hash, rank, size};
}

} // namespace

#define HPCPROF_NCCL_REAL(name)                                                                    \
    static NcclFunction<decltype(&name)> real(#name, "p" #name);                                  \
    auto fn = real.get();                                                                          \
    if (!fn) return missing()

// ---- communicators -------------------------------------------------------------------------

HPCPROF_HOOK ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                           int rank) {
    HPCPROF_NCCL_REAL(ncclCommInitRank);
    return tracedCreate(Op::NcclCommInitRank, [&] { return fn(comm, nranks, id, rank); }, comm,
                        [&] { return Shape{hashBytes(&id, sizeof(id)), rank, nranks}; });
}

HPCPROF_HOOK ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                 int rank, ncclConfig_t* config) {
    HPCPROF_NCCL_REAL(ncclCommInitRankConfig);
    return tracedCreate(Op::NcclCommInitRankConfig,
                        [&] { return fn(comm, nranks, id, rank, config); }, comm,
                        [&] { return Shape{hashBytes(&id, sizeof(id)), rank, nranks}; });
}

HPCPROF_HOOK ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank,
                                                   int nId, ncclUniqueId* ids,
                                                   ncclConfig_t* config) {
    HPCPROF_NCCL_REAL(ncclCommInitRankScalable);
    return tracedCreate(
        Op::NcclCommInitRankScalable, [&] { return fn(comm, nranks, rank, nId, ids, config); },
        comm, [&] { return Shape{nId > 0 ? hashBytes(&ids[0], sizeof(ids[0])) : 0, rank, nranks}; });
}

HPCPROF_HOOK ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
    HPCPROF_NCCL_REAL(ncclCommInitAll);
    if (!agent::recording(agent::SourceBit::Nccl)) return fn(comms, ndev, devlist);
    uint64_t t0 = agent::now();
    ncclResult_t r = fn(comms, ndev, devlist);
    uint64_t t1 = agent::now();
    // One process owns every member: a key unique to this process and call is enough.
    static uint32_t s_calls = 0;
    uint64_t seed[2] = {uint64_t(getpid()), __atomic_fetch_add(&s_calls, 1u, __ATOMIC_RELAXED)};
    uint64_t hash = hashBytes(seed, sizeof(seed));
    for (int i = 0; created(r) && i < ndev; ++i) {
        Call c{Op::NcclCommInitAll};
        CommState* st = addComm(comms[i], hash, i, ndev);
        c.nranks = uint64_t(ndev);
        c.peer = i;
        write(c, st, raw::kNoSeq, t0, t1, r, 0);
    }
    if (!created(r)) write(Call{Op::NcclCommInitAll}, nullptr, raw::kNoSeq, t0, t1, r, 0);
    return r;
}

HPCPROF_HOOK ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                        ncclConfig_t* config) {
    HPCPROF_NCCL_REAL(ncclCommSplit);
    // Every member splits the parent in the same order, so (parent key, split number, color)
    // names the child identically on all of its members.
    CommState* parent = findComm(comm);
    uint32_t n = parent ? __atomic_fetch_add(&parent->splits, 1u, __ATOMIC_RELAXED) : 0;
    uint64_t parentHash = parent ? parent->keyHash : 0;
    return tracedCreate(Op::NcclCommSplit, [&] { return fn(comm, color, key, newcomm, config); },
                        newcomm, [&] {
                            uint64_t seed[3] = {parentHash, n, uint64_t(int64_t(color))};
                            return shapeOf(*newcomm, hashBytes(seed, sizeof(seed)));
                        });
}

namespace {
ncclResult_t teardown(Op op, ncclComm_t comm, ncclResult_t (*fn)(ncclComm_t), bool forget) {
    if (!agent::recording(agent::SourceBit::Nccl)) return fn(comm);
    CommState* st = findComm(comm);
    uint64_t t0 = agent::now();
    raw::InFlightCall* line = publish(Call{op, comm}, st, raw::kNoSeq, t0);
    ncclResult_t r = fn(comm);
    uint64_t t1 = agent::now();
    agent::endCall(line);
    write(Call{op, comm}, st, raw::kNoSeq, t0, t1, r, 0);
    if (forget) removeComm(comm);
    return r;
}
} // namespace

HPCPROF_HOOK ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    HPCPROF_NCCL_REAL(ncclCommFinalize);
    return teardown(Op::NcclCommFinalize, comm, fn, false);
}
HPCPROF_HOOK ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    HPCPROF_NCCL_REAL(ncclCommDestroy);
    return teardown(Op::NcclCommDestroy, comm, fn, true);
}
HPCPROF_HOOK ncclResult_t ncclCommAbort(ncclComm_t comm) {
    HPCPROF_NCCL_REAL(ncclCommAbort);
    return teardown(Op::NcclCommAbort, comm, fn, true);
}

// ---- polling a non-blocking communicator ---------------------------------------------------

// Not recorded as an event (a watchdog thread may call it all along): while it answers
// ncclInProgress (a non-blocking communicator's creation, split or operation not done yet) the
// thread shows "polling since the first such answer" on its in-flight line, with the
// communicator; any other answer ends that.
HPCPROF_HOOK ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
    HPCPROF_NCCL_REAL(ncclCommGetAsyncError);
    ncclResult_t r = fn(comm, asyncError);
    if (!agent::recording(agent::SourceBit::Nccl)) return r;
    if (r == ncclSuccess && asyncError && *asyncError == ncclInProgress)
        agent::pollUnsuccessful(Op::NcclCommGetAsyncError, agent::now(), [&](raw::InFlightCall& f) {
            if (const CommState* st = findComm(comm)) {
                f.commId = st->keyId;
                f.tag = st->size;
                f.flags |= raw::kFlagTagIsCommSize;
            }
        });
    else
        agent::pollSucceeded();
    return r;
}

// ---- collectives ---------------------------------------------------------------------------

HPCPROF_HOOK ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                        cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclAllReduce);
    Call c{Op::NcclAllReduce, comm, count, datatype, op, -1, stream, true};
    return traced(c, [&] { return fn(sendbuff, recvbuff, count, datatype, op, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, int root, ncclComm_t comm,
                                        cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclBroadcast);
    Call c{Op::NcclBroadcast, comm, count, datatype, -1, root, stream, true};
    return traced(c, [&] { return fn(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                    ncclComm_t comm, cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclBcast);
    Call c{Op::NcclBcast, comm, count, datatype, -1, root, stream, true};
    return traced(c, [&] { return fn(buff, count, datatype, root, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclRedOp_t op, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclReduce);
    Call c{Op::NcclReduce, comm, count, datatype, op, root, stream, true};
    return traced(c,
                  [&] { return fn(sendbuff, recvbuff, count, datatype, op, root, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                        ncclDataType_t datatype, ncclComm_t comm,
                                        cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclAllGather);
    Call c{Op::NcclAllGather, comm, sendcount, datatype, -1, -1, stream, true};
    return traced(c, [&] { return fn(sendbuff, recvbuff, sendcount, datatype, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                            ncclDataType_t datatype, ncclRedOp_t op,
                                            ncclComm_t comm, cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclReduceScatter);
    Call c{Op::NcclReduceScatter, comm, recvcount, datatype, op, -1, stream, true};
    return traced(c,
                  [&] { return fn(sendbuff, recvbuff, recvcount, datatype, op, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, ncclComm_t comm,
                                       cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclAlltoAll);
    Call c{Op::NcclAlltoAll, comm, count, datatype, -1, -1, stream, true};
    return traced(c, [&] { return fn(sendbuff, recvbuff, count, datatype, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                     ncclDataType_t datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclGather);
    Call c{Op::NcclGather, comm, count, datatype, -1, root, stream, true};
    return traced(c, [&] { return fn(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, int root, ncclComm_t comm,
                                      cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclScatter);
    Call c{Op::NcclScatter, comm, count, datatype, -1, root, stream, true};
    return traced(c, [&] { return fn(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

// ---- point-to-point and groups ---------------------------------------------------------------

HPCPROF_HOOK ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                   int peer, ncclComm_t comm, cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclSend);
    Call c{Op::NcclSend, comm, count, datatype, -1, peer, stream, false};
    return traced(c, [&] { return fn(sendbuff, count, datatype, peer, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                   ncclComm_t comm, cudaStream_t stream) {
    HPCPROF_NCCL_REAL(ncclRecv);
    Call c{Op::NcclRecv, comm, count, datatype, -1, peer, stream, false};
    return traced(c, [&] { return fn(recvbuff, count, datatype, peer, comm, stream); });
}

HPCPROF_HOOK ncclResult_t ncclGroupStart() {
    HPCPROF_NCCL_REAL(ncclGroupStart);
    // The group ordinal ties the calls inside a group to the ncclGroupEnd that launches them.
    if (t_groupDepth++ == 0) t_currentGroup = ++t_groupCounter;
    return traced(Call{Op::NcclGroupStart}, [&] { return fn(); });
}

HPCPROF_HOOK ncclResult_t ncclGroupEnd() {
    HPCPROF_NCCL_REAL(ncclGroupEnd);
    ncclResult_t r = traced(Call{Op::NcclGroupEnd}, [&] { return fn(); });
    if (t_groupDepth > 0 && --t_groupDepth == 0) t_currentGroup = 0;
    return r;
}
