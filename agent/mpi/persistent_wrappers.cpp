// SPDX-License-Identifier: MIT
// Persistent point-to-point requests: MPI_Send_init and friends record the request (category
// mpi_setup: nothing is transferred yet); each MPI_Start / MPI_Startall posts it anew under a fresh
// request number, like an MPI_Isend / MPI_Irecv, and the wait that completes it names that number
// (wait_wrappers.cpp). MPI_Request_free forgets the request. Not recorded: MPI_Request_free.
#include "mpi_abi.hpp"
#include "mpi_call.hpp"
#include "request_registry.hpp"

using namespace hpcprof::agent::mpi;

namespace {

using InitFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
RealMpi<InitFn> g_sendInit("PMPI_Send_init"), g_bsendInit("PMPI_Bsend_init"),
    g_ssendInit("PMPI_Ssend_init"), g_rsendInit("PMPI_Rsend_init");
RealMpi<int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*)> g_recvInit(
    "PMPI_Recv_init");
RealMpi<int (*)(MPI_Request*)> g_start("PMPI_Start"), g_requestFree("PMPI_Request_free");
RealMpi<int (*)(int, MPI_Request[])> g_startall("PMPI_Startall");

/// Describes an MPI_*_init call and remembers its request as persistent (inactive).
void persistentInit(RequestKind kind, int rc, MpiEvent& e, int count, MPI_Datatype type, int peer,
                    int tag, MPI_Comm comm, MPI_Request* req) {
    CommInfo* c = lookupComm(comm);
    e.peer = worldRankOf(c, peer);
    e.tag = tag;
    e.commId = c ? c->keyId : 0;
    e.bytes = typeBytes(type, count);
    if (rc == MPI_SUCCESS && req) {
        RequestInfo info{kind, e.peer, tag, e.bytes, e.commId, c, type, 0};
        info.persistent = true;
        rememberRequest(*req, info);
    }
}

int sendInit(RealMpi<InitFn>& real, Op op, const void* buf, int count, MPI_Datatype type, int dest,
             int tag, MPI_Comm comm, MPI_Request* req) {
    auto fn = real.get();
    if (!fn) return kNoMpi;
    return tracedCall(op, [&] { return fn(buf, count, type, dest, tag, comm, req); },
                      [&](MpiEvent& e, int rc) {
                          persistentInit(RequestKind::Send, rc, e, count, type, dest, tag, comm,
                                         req);
                      });
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest,
                                     int tag, MPI_Comm comm, MPI_Request* req) {
    return sendInit(g_sendInit, Op::MpiSendInit, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Send_init)

HPCPROF_MPI_EXPORT int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest,
                                      int tag, MPI_Comm comm, MPI_Request* req) {
    return sendInit(g_bsendInit, Op::MpiBsendInit, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Bsend_init)

HPCPROF_MPI_EXPORT int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest,
                                      int tag, MPI_Comm comm, MPI_Request* req) {
    return sendInit(g_ssendInit, Op::MpiSsendInit, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Ssend_init)

HPCPROF_MPI_EXPORT int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest,
                                      int tag, MPI_Comm comm, MPI_Request* req) {
    return sendInit(g_rsendInit, Op::MpiRsendInit, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Rsend_init)

HPCPROF_MPI_EXPORT int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag,
                                     MPI_Comm comm, MPI_Request* req) {
    auto fn = g_recvInit.get();
    if (!fn) return kNoMpi;
    return tracedCall(Op::MpiRecvInit, [&] { return fn(buf, count, type, source, tag, comm, req); },
                      [&](MpiEvent& e, int rc) {
                          persistentInit(RequestKind::Recv, rc, e, count, type, source, tag, comm,
                                         req);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Recv_init)

// MPI_Start: the posting event of one transfer, with the persistent request's peer, tag, bytes.
HPCPROF_MPI_EXPORT int MPI_Start(MPI_Request* req) {
    auto fn = g_start.get();
    if (!fn) return kNoMpi;
    return tracedCall(Op::MpiStart, [&] { return fn(req); }, [&](MpiEvent& e, int rc) {
        RequestInfo info;
        if (rc != MPI_SUCCESS || !req) return;
        uint32_t number = nextRequestNumber();
        if (!startRequest(*req, number, info)) return;
        e.peer = info.peer;
        e.tag = info.tag;
        e.commId = info.commId;
        e.bytes = info.bytes;
        describeRequest(e, number);
    });
}
HPCPROF_PMPI_ALIAS(MPI_Start)

// MPI_Startall posts `count` transfers: request numbers seq .. seq + count - 1 in array order
// (tag = count); bytes = their sum, peer = their common peer (-1 if they differ).
HPCPROF_MPI_EXPORT int MPI_Startall(int count, MPI_Request reqs[]) {
    auto fn = g_startall.get();
    if (!fn) return kNoMpi;
    return tracedCall(Op::MpiStartall, [&] { return fn(count, reqs); }, [&](MpiEvent& e, int rc) {
        e.tag = count;
        if (rc != MPI_SUCCESS || !reqs || count <= 0) return;
        uint32_t first = __atomic_fetch_add(&nextRequestNumberCounter(), uint32_t(count),
                                            __ATOMIC_RELAXED);
        int64_t bytes = 0;
        for (int i = 0; i < count; ++i) {
            RequestInfo info;
            // An unknown request still uses its number, so the numbers stay in array order.
            if (!startRequest(reqs[i], first + uint32_t(i), info)) continue;
            e.peer = i == 0 ? info.peer : (e.peer == info.peer ? e.peer : -1);
            e.commId = i == 0 ? info.commId : (e.commId == info.commId ? e.commId : 0);
            if (info.bytes > 0) bytes += info.bytes;
        }
        e.bytes = bytes;
        describeRequest(e, first);
    });
}
HPCPROF_PMPI_ALIAS(MPI_Startall)

// Not recorded: only forgets the request, whose handle MPI may hand out again.
HPCPROF_MPI_EXPORT int MPI_Request_free(MPI_Request* req) {
    auto fn = g_requestFree.get();
    if (!fn) return kNoMpi;
    if (req) forgetRequest(*req);
    return fn(req);
}
HPCPROF_PMPI_ALIAS(MPI_Request_free)
