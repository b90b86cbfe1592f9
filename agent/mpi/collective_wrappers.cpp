// SPDX-License-Identifier: MIT
// Collectives, blocking and non-blocking, with their v/w variants. Each records its
// communicator key and instance number (instance k matches across members), peer = the root's
// world rank for rooted collectives, tag = the communicator size, bytes = what this rank sends
// (a scatter's root: everything it scatters; the others: what they receive). Definitions per
// function in docs/mpi-capture.md.
#include "mpi_abi.hpp"
#include "mpi_call.hpp"
#include "request_registry.hpp"

using namespace hpcprof::agent::mpi;

namespace {

/// Records a collective; `bytesOf(info)` is evaluated before the call (arguments only).
template <typename Call, typename BytesOf>
int collective(Op op, MPI_Comm comm, int root, MPI_Request* req, Call&& call, BytesOf&& bytesOf) {
    if (!enter()) {
        int rc = call();
        leave();
        return rc;
    }
    CommInfo* info = lookupComm(comm);
    uint32_t seq = nextSeq(info);
    int64_t bytes = bytesOf(info);
    uint64_t t0 = callStart();
    MpiEvent e{op};
    describeCollective(e, info, seq);
    e.bytes = bytes;
    if (root >= 0 || root == MPI_ROOT) e.peer = worldRankOf(info, root);
    auto* line = publishCall(e, t0);
    int rc = call();
    uint64_t t1 = ticksNow();
    finishCall(line);
    if (req && rc == MPI_SUCCESS)
        rememberRequest(*req, {RequestKind::Collective, e.peer, 0, bytes, e.commId, info, {}, 0});
    record(e, t0, t1);
    leave(t1);
    return rc;
}

// Collectives never advance the sequence number for calls hpcprof does not record, so a nested
// (library-internal) collective must not count either: only the outermost call reaches here.

int64_t sumCounts(const int* counts, int n) {
    int64_t s = 0;
    if (counts)
        for (int i = 0; i < n; ++i) s += counts[i];
    return s;
}

/// The root of an intercommunicator collective passes MPI_ROOT (its rank names the other group).
bool isRoot(const CommInfo* c, int root) {
    return c && (c->inter ? root == MPI_ROOT : c->myRank == root);
}

#define HPCPROF_REAL(var, name, ...) RealMpi<int (*)(__VA_ARGS__)> var(name)

HPCPROF_REAL(g_barrier, "PMPI_Barrier", MPI_Comm);
HPCPROF_REAL(g_ibarrier, "PMPI_Ibarrier", MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_bcast, "PMPI_Bcast", void*, int, MPI_Datatype, int, MPI_Comm);
HPCPROF_REAL(g_ibcast, "PMPI_Ibcast", void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_reduce, "PMPI_Reduce", const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
HPCPROF_REAL(g_ireduce, "PMPI_Ireduce", const void*, void*, int, MPI_Datatype, MPI_Op, int,
             MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_allreduce, "PMPI_Allreduce", const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
HPCPROF_REAL(g_iallreduce, "PMPI_Iallreduce", const void*, void*, int, MPI_Datatype, MPI_Op,
             MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_scan, "PMPI_Scan", const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
HPCPROF_REAL(g_iscan, "PMPI_Iscan", const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm,
             MPI_Request*);
HPCPROF_REAL(g_exscan, "PMPI_Exscan", const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
HPCPROF_REAL(g_iexscan, "PMPI_Iexscan", const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm,
             MPI_Request*);
HPCPROF_REAL(g_gather, "PMPI_Gather", const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int,
             MPI_Comm);
HPCPROF_REAL(g_igather, "PMPI_Igather", const void*, int, MPI_Datatype, void*, int, MPI_Datatype,
             int, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_gatherv, "PMPI_Gatherv", const void*, int, MPI_Datatype, void*, const int*,
             const int*, MPI_Datatype, int, MPI_Comm);
HPCPROF_REAL(g_igatherv, "PMPI_Igatherv", const void*, int, MPI_Datatype, void*, const int*,
             const int*, MPI_Datatype, int, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_scatter, "PMPI_Scatter", const void*, int, MPI_Datatype, void*, int, MPI_Datatype,
             int, MPI_Comm);
HPCPROF_REAL(g_iscatter, "PMPI_Iscatter", const void*, int, MPI_Datatype, void*, int,
             MPI_Datatype, int, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_scatterv, "PMPI_Scatterv", const void*, const int*, const int*, MPI_Datatype, void*,
             int, MPI_Datatype, int, MPI_Comm);
HPCPROF_REAL(g_iscatterv, "PMPI_Iscatterv", const void*, const int*, const int*, MPI_Datatype,
             void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_allgather, "PMPI_Allgather", const void*, int, MPI_Datatype, void*, int,
             MPI_Datatype, MPI_Comm);
HPCPROF_REAL(g_iallgather, "PMPI_Iallgather", const void*, int, MPI_Datatype, void*, int,
             MPI_Datatype, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_allgatherv, "PMPI_Allgatherv", const void*, int, MPI_Datatype, void*, const int*,
             const int*, MPI_Datatype, MPI_Comm);
HPCPROF_REAL(g_iallgatherv, "PMPI_Iallgatherv", const void*, int, MPI_Datatype, void*, const int*,
             const int*, MPI_Datatype, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_alltoall, "PMPI_Alltoall", const void*, int, MPI_Datatype, void*, int, MPI_Datatype,
             MPI_Comm);
HPCPROF_REAL(g_ialltoall, "PMPI_Ialltoall", const void*, int, MPI_Datatype, void*, int,
             MPI_Datatype, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_alltoallv, "PMPI_Alltoallv", const void*, const int*, const int*, MPI_Datatype,
             void*, const int*, const int*, MPI_Datatype, MPI_Comm);
HPCPROF_REAL(g_ialltoallv, "PMPI_Ialltoallv", const void*, const int*, const int*, MPI_Datatype,
             void*, const int*, const int*, MPI_Datatype, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_alltoallw, "PMPI_Alltoallw", const void*, const int*, const int*,
             const MPI_Datatype*, void*, const int*, const int*, const MPI_Datatype*, MPI_Comm);
HPCPROF_REAL(g_ialltoallw, "PMPI_Ialltoallw", const void*, const int*, const int*,
             const MPI_Datatype*, void*, const int*, const int*, const MPI_Datatype*, MPI_Comm,
             MPI_Request*);
HPCPROF_REAL(g_reduceScatter, "PMPI_Reduce_scatter", const void*, void*, const int*, MPI_Datatype,
             MPI_Op, MPI_Comm);
HPCPROF_REAL(g_ireduceScatter, "PMPI_Ireduce_scatter", const void*, void*, const int*,
             MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*);
HPCPROF_REAL(g_reduceScatterBlock, "PMPI_Reduce_scatter_block", const void*, void*, int,
             MPI_Datatype, MPI_Op, MPI_Comm);
HPCPROF_REAL(g_ireduceScatterBlock, "PMPI_Ireduce_scatter_block", const void*, void*, int,
             MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request*);

#undef HPCPROF_REAL

int64_t gatherBytes(const CommInfo* c, const void* sbuf, int scount, MPI_Datatype stype, int rcount,
                    MPI_Datatype rtype) {
    if (sbuf == inPlace()) return typeBytes(rtype, rcount);
    (void)c;
    return typeBytes(stype, scount);
}

int64_t alltoallwBytes(const CommInfo* c, const int* counts, const MPI_Datatype* types) {
    if (!c || c->peerSize <= 0 || !counts || !types) return -1;
    int64_t sum = 0;
    for (int i = 0; i < c->peerSize; ++i) {
        int64_t b = typeBytes(types[i], counts[i]);
        if (b < 0) return -1;
        sum += b;
    }
    return sum;
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Barrier(MPI_Comm comm) {
    auto fn = g_barrier.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiBarrier, comm, -1, nullptr, [&] { return fn(comm); },
                      [](const CommInfo*) { return int64_t(0); });
}
HPCPROF_PMPI_ALIAS(MPI_Barrier)

HPCPROF_MPI_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
    auto fn = g_ibarrier.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIbarrier, comm, -1, req, [&] { return fn(comm, req); },
                      [](const CommInfo*) { return int64_t(0); });
}
HPCPROF_PMPI_ALIAS(MPI_Ibarrier)

HPCPROF_MPI_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    auto fn = g_bcast.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiBcast, comm, root, nullptr,
                      [&] { return fn(buf, count, type, root, comm); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Bcast)

HPCPROF_MPI_EXPORT int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                                  MPI_Request* req) {
    auto fn = g_ibcast.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIbcast, comm, root, req,
                      [&] { return fn(buf, count, type, root, comm, req); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Ibcast)

HPCPROF_MPI_EXPORT int MPI_Reduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                                  int root, MPI_Comm comm) {
    auto fn = g_reduce.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiReduce, comm, root, nullptr,
                      [&] { return fn(s, r, count, type, op, root, comm); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Reduce)

HPCPROF_MPI_EXPORT int MPI_Ireduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                                   int root, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_ireduce.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIreduce, comm, root, req,
                      [&] { return fn(s, r, count, type, op, root, comm, req); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Ireduce)

HPCPROF_MPI_EXPORT int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type,
                                     MPI_Op op, MPI_Comm comm) {
    auto fn = g_allreduce.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiAllreduce, comm, -1, nullptr,
                      [&] { return fn(s, r, count, type, op, comm); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Allreduce)

HPCPROF_MPI_EXPORT int MPI_Iallreduce(const void* s, void* r, int count, MPI_Datatype type,
                                      MPI_Op op, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iallreduce.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIallreduce, comm, -1, req,
                      [&] { return fn(s, r, count, type, op, comm, req); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Iallreduce)

HPCPROF_MPI_EXPORT int MPI_Scan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                                MPI_Comm comm) {
    auto fn = g_scan.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiScan, comm, -1, nullptr, [&] { return fn(s, r, count, type, op, comm); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Scan)

HPCPROF_MPI_EXPORT int MPI_Iscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                                 MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iscan.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIscan, comm, -1, req,
                      [&] { return fn(s, r, count, type, op, comm, req); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Iscan)

HPCPROF_MPI_EXPORT int MPI_Exscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm) {
    auto fn = g_exscan.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiExscan, comm, -1, nullptr,
                      [&] { return fn(s, r, count, type, op, comm); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Exscan)

HPCPROF_MPI_EXPORT int MPI_Iexscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iexscan.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIexscan, comm, -1, req,
                      [&] { return fn(s, r, count, type, op, comm, req); },
                      [&](const CommInfo*) { return typeBytes(type, count); });
}
HPCPROF_PMPI_ALIAS(MPI_Iexscan)

HPCPROF_MPI_EXPORT int MPI_Gather(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                  MPI_Datatype rt, int root, MPI_Comm comm) {
    auto fn = g_gather.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiGather, comm, root, nullptr,
                      [&] { return fn(s, sc, st, r, rc, rt, root, comm); },
                      [&](const CommInfo* c) { return gatherBytes(c, s, sc, st, rc, rt); });
}
HPCPROF_PMPI_ALIAS(MPI_Gather)

HPCPROF_MPI_EXPORT int MPI_Igather(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                   MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_igather.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIgather, comm, root, req,
                      [&] { return fn(s, sc, st, r, rc, rt, root, comm, req); },
                      [&](const CommInfo* c) { return gatherBytes(c, s, sc, st, rc, rt); });
}
HPCPROF_PMPI_ALIAS(MPI_Igather)

HPCPROF_MPI_EXPORT int MPI_Gatherv(const void* s, int sc, MPI_Datatype st, void* r, const int* rcs,
                                   const int* displs, MPI_Datatype rt, int root, MPI_Comm comm) {
    auto fn = g_gatherv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiGatherv, comm, root, nullptr,
                      [&] { return fn(s, sc, st, r, rcs, displs, rt, root, comm); },
                      [&](const CommInfo* c) {
                          return s == inPlace() && c && rcs ? typeBytes(rt, rcs[c->myRank])
                                                            : typeBytes(st, sc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Gatherv)

HPCPROF_MPI_EXPORT int MPI_Igatherv(const void* s, int sc, MPI_Datatype st, void* r,
                                    const int* rcs, const int* displs, MPI_Datatype rt, int root,
                                    MPI_Comm comm, MPI_Request* req) {
    auto fn = g_igatherv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIgatherv, comm, root, req,
                      [&] { return fn(s, sc, st, r, rcs, displs, rt, root, comm, req); },
                      [&](const CommInfo* c) {
                          return s == inPlace() && c && rcs ? typeBytes(rt, rcs[c->myRank])
                                                            : typeBytes(st, sc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Igatherv)

HPCPROF_MPI_EXPORT int MPI_Scatter(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                   MPI_Datatype rt, int root, MPI_Comm comm) {
    auto fn = g_scatter.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiScatter, comm, root, nullptr,
                      [&] { return fn(s, sc, st, r, rc, rt, root, comm); },
                      [&](const CommInfo* c) {
                          return isRoot(c, root) ? typeBytes(st, int64_t(sc) * c->peerSize)
                                                 : typeBytes(rt, rc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Scatter)

HPCPROF_MPI_EXPORT int MPI_Iscatter(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                    MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iscatter.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIscatter, comm, root, req,
                      [&] { return fn(s, sc, st, r, rc, rt, root, comm, req); },
                      [&](const CommInfo* c) {
                          return isRoot(c, root) ? typeBytes(st, int64_t(sc) * c->peerSize)
                                                 : typeBytes(rt, rc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Iscatter)

HPCPROF_MPI_EXPORT int MPI_Scatterv(const void* s, const int* scs, const int* displs,
                                    MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root,
                                    MPI_Comm comm) {
    auto fn = g_scatterv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiScatterv, comm, root, nullptr,
                      [&] { return fn(s, scs, displs, st, r, rc, rt, root, comm); },
                      [&](const CommInfo* c) {
                          return isRoot(c, root) ? typeBytes(st, sumCounts(scs, c->peerSize))
                                                 : typeBytes(rt, rc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Scatterv)

HPCPROF_MPI_EXPORT int MPI_Iscatterv(const void* s, const int* scs, const int* displs,
                                     MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root,
                                     MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iscatterv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIscatterv, comm, root, req,
                      [&] { return fn(s, scs, displs, st, r, rc, rt, root, comm, req); },
                      [&](const CommInfo* c) {
                          return isRoot(c, root) ? typeBytes(st, sumCounts(scs, c->peerSize))
                                                 : typeBytes(rt, rc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Iscatterv)

HPCPROF_MPI_EXPORT int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                     MPI_Datatype rt, MPI_Comm comm) {
    auto fn = g_allgather.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiAllgather, comm, -1, nullptr,
                      [&] { return fn(s, sc, st, r, rc, rt, comm); },
                      [&](const CommInfo* c) { return gatherBytes(c, s, sc, st, rc, rt); });
}
HPCPROF_PMPI_ALIAS(MPI_Allgather)

HPCPROF_MPI_EXPORT int MPI_Iallgather(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                      MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iallgather.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIallgather, comm, -1, req,
                      [&] { return fn(s, sc, st, r, rc, rt, comm, req); },
                      [&](const CommInfo* c) { return gatherBytes(c, s, sc, st, rc, rt); });
}
HPCPROF_PMPI_ALIAS(MPI_Iallgather)

HPCPROF_MPI_EXPORT int MPI_Allgatherv(const void* s, int sc, MPI_Datatype st, void* r,
                                      const int* rcs, const int* displs, MPI_Datatype rt,
                                      MPI_Comm comm) {
    auto fn = g_allgatherv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiAllgatherv, comm, -1, nullptr,
                      [&] { return fn(s, sc, st, r, rcs, displs, rt, comm); },
                      [&](const CommInfo* c) {
                          return s == inPlace() && c && rcs ? typeBytes(rt, rcs[c->myRank])
                                                            : typeBytes(st, sc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Allgatherv)

HPCPROF_MPI_EXPORT int MPI_Iallgatherv(const void* s, int sc, MPI_Datatype st, void* r,
                                       const int* rcs, const int* displs, MPI_Datatype rt,
                                       MPI_Comm comm, MPI_Request* req) {
    auto fn = g_iallgatherv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIallgatherv, comm, -1, req,
                      [&] { return fn(s, sc, st, r, rcs, displs, rt, comm, req); },
                      [&](const CommInfo* c) {
                          return s == inPlace() && c && rcs ? typeBytes(rt, rcs[c->myRank])
                                                            : typeBytes(st, sc);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Iallgatherv)

HPCPROF_MPI_EXPORT int MPI_Alltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                    MPI_Datatype rt, MPI_Comm comm) {
    auto fn = g_alltoall.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiAlltoall, comm, -1, nullptr,
                      [&] { return fn(s, sc, st, r, rc, rt, comm); },
                      [&](const CommInfo* c) {
                          return c ? (s == inPlace() ? typeBytes(rt, int64_t(rc) * c->peerSize)
                                                     : typeBytes(st, int64_t(sc) * c->peerSize))
                                   : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Alltoall)

HPCPROF_MPI_EXPORT int MPI_Ialltoall(const void* s, int sc, MPI_Datatype st, void* r, int rc,
                                     MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_ialltoall.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIalltoall, comm, -1, req,
                      [&] { return fn(s, sc, st, r, rc, rt, comm, req); },
                      [&](const CommInfo* c) {
                          return c ? (s == inPlace() ? typeBytes(rt, int64_t(rc) * c->peerSize)
                                                     : typeBytes(st, int64_t(sc) * c->peerSize))
                                   : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Ialltoall)

HPCPROF_MPI_EXPORT int MPI_Alltoallv(const void* s, const int* scs, const int* sd, MPI_Datatype st,
                                     void* r, const int* rcs, const int* rd, MPI_Datatype rt,
                                     MPI_Comm comm) {
    auto fn = g_alltoallv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiAlltoallv, comm, -1, nullptr,
                      [&] { return fn(s, scs, sd, st, r, rcs, rd, rt, comm); },
                      [&](const CommInfo* c) {
                          return c ? (s == inPlace() ? typeBytes(rt, sumCounts(rcs, c->peerSize))
                                                     : typeBytes(st, sumCounts(scs, c->peerSize)))
                                   : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Alltoallv)

HPCPROF_MPI_EXPORT int MPI_Ialltoallv(const void* s, const int* scs, const int* sd,
                                      MPI_Datatype st, void* r, const int* rcs, const int* rd,
                                      MPI_Datatype rt, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_ialltoallv.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIalltoallv, comm, -1, req,
                      [&] { return fn(s, scs, sd, st, r, rcs, rd, rt, comm, req); },
                      [&](const CommInfo* c) {
                          return c ? (s == inPlace() ? typeBytes(rt, sumCounts(rcs, c->peerSize))
                                                     : typeBytes(st, sumCounts(scs, c->peerSize)))
                                   : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Ialltoallv)

HPCPROF_MPI_EXPORT int MPI_Alltoallw(const void* s, const int* scs, const int* sd,
                                     const MPI_Datatype* sts, void* r, const int* rcs,
                                     const int* rd, const MPI_Datatype* rts, MPI_Comm comm) {
    auto fn = g_alltoallw.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiAlltoallw, comm, -1, nullptr,
                      [&] { return fn(s, scs, sd, sts, r, rcs, rd, rts, comm); },
                      [&](const CommInfo* c) {
                          return s == inPlace() ? alltoallwBytes(c, rcs, rts)
                                                : alltoallwBytes(c, scs, sts);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Alltoallw)

HPCPROF_MPI_EXPORT int MPI_Ialltoallw(const void* s, const int* scs, const int* sd,
                                      const MPI_Datatype* sts, void* r, const int* rcs,
                                      const int* rd, const MPI_Datatype* rts, MPI_Comm comm,
                                      MPI_Request* req) {
    auto fn = g_ialltoallw.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIalltoallw, comm, -1, req,
                      [&] { return fn(s, scs, sd, sts, r, rcs, rd, rts, comm, req); },
                      [&](const CommInfo* c) {
                          return s == inPlace() ? alltoallwBytes(c, rcs, rts)
                                                : alltoallwBytes(c, scs, sts);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Ialltoallw)

HPCPROF_MPI_EXPORT int MPI_Reduce_scatter(const void* s, void* r, const int* rcs,
                                          MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    auto fn = g_reduceScatter.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiReduceScatter, comm, -1, nullptr,
                      [&] { return fn(s, r, rcs, type, op, comm); },
                      [&](const CommInfo* c) {
                          return c ? typeBytes(type, sumCounts(rcs, c->peerSize)) : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Reduce_scatter)

HPCPROF_MPI_EXPORT int MPI_Ireduce_scatter(const void* s, void* r, const int* rcs,
                                           MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                           MPI_Request* req) {
    auto fn = g_ireduceScatter.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIreduceScatter, comm, -1, req,
                      [&] { return fn(s, r, rcs, type, op, comm, req); },
                      [&](const CommInfo* c) {
                          return c ? typeBytes(type, sumCounts(rcs, c->peerSize)) : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Ireduce_scatter)

HPCPROF_MPI_EXPORT int MPI_Reduce_scatter_block(const void* s, void* r, int rc, MPI_Datatype type,
                                                MPI_Op op, MPI_Comm comm) {
    auto fn = g_reduceScatterBlock.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiReduceScatterBlock, comm, -1, nullptr,
                      [&] { return fn(s, r, rc, type, op, comm); },
                      [&](const CommInfo* c) {
                          return c ? typeBytes(type, int64_t(rc) * c->peerSize) : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Reduce_scatter_block)

HPCPROF_MPI_EXPORT int MPI_Ireduce_scatter_block(const void* s, void* r, int rc, MPI_Datatype type,
                                                 MPI_Op op, MPI_Comm comm, MPI_Request* req) {
    auto fn = g_ireduceScatterBlock.get();
    if (!fn) return kNoMpi;
    return collective(Op::MpiIreduceScatterBlock, comm, -1, req,
                      [&] { return fn(s, r, rc, type, op, comm, req); },
                      [&](const CommInfo* c) {
                          return c ? typeBytes(type, int64_t(rc) * c->peerSize) : int64_t(-1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Ireduce_scatter_block)
