// SPDX-License-Identifier: MIT
// Point-to-point: blocking and non-blocking sends and receives, probes. peer = the partner's
// world rank, tag = the message tag, bytes = bytes sent (receives: bytes received, from the
// status).
#include "mpi_abi.hpp"
#include "mpi_call.hpp"
#include "request_registry.hpp"

using namespace hpcprof::agent::mpi;

namespace {

using SendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using IsendFn = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
RealMpi<SendFn> g_send("PMPI_Send"), g_bsend("PMPI_Bsend"), g_ssend("PMPI_Ssend"),
    g_rsend("PMPI_Rsend");
RealMpi<IsendFn> g_isend("PMPI_Isend"), g_ibsend("PMPI_Ibsend"), g_issend("PMPI_Issend"),
    g_irsend("PMPI_Irsend");
RealMpi<int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*)> g_recv("PMPI_Recv");
RealMpi<int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*)> g_irecv("PMPI_Irecv");
RealMpi<int (*)(const void*, int, MPI_Datatype, int, int, void*, int, MPI_Datatype, int, int,
                MPI_Comm, MPI_Status*)>
    g_sendrecv("PMPI_Sendrecv");
RealMpi<int (*)(void*, int, MPI_Datatype, int, int, int, int, MPI_Comm, MPI_Status*)>
    g_sendrecvReplace("PMPI_Sendrecv_replace");
RealMpi<int (*)(int, int, MPI_Comm, MPI_Status*)> g_probe("PMPI_Probe");
RealMpi<int (*)(int, int, MPI_Comm, int*, MPI_Status*)> g_iprobe("PMPI_Iprobe");
RealMpi<int (*)(const MPI_Status*, MPI_Datatype, int*)> g_getCount("PMPI_Get_count");

int blockingSend(RealMpi<SendFn>& real, Op op, const void* buf, int count, MPI_Datatype type,
                 int dest, int tag, MPI_Comm comm) {
    auto fn = real.get();
    if (!fn) return kNoMpi;
    return tracedCallAt(
        op,
        [&](MpiEvent& e) {
            CommInfo* c = lookupComm(comm);
            e.peer = worldRankOf(c, dest);
            e.tag = tag;
            e.commId = c ? c->keyId : 0;
            e.bytes = typeBytes(type, count);
        },
        [&] { return fn(buf, count, type, dest, tag, comm); }, [](MpiEvent&, int) {});
}

int nonblockingSend(RealMpi<IsendFn>& real, Op op, const void* buf, int count, MPI_Datatype type,
                    int dest, int tag, MPI_Comm comm, MPI_Request* req) {
    auto fn = real.get();
    if (!fn) return kNoMpi;
    return tracedCall(op, [&] { return fn(buf, count, type, dest, tag, comm, req); },
                      [&](MpiEvent& e, int rc) {
                          CommInfo* c = lookupComm(comm);
                          e.peer = worldRankOf(c, dest);
                          e.tag = tag;
                          e.commId = c ? c->keyId : 0;
                          e.bytes = typeBytes(type, count);
                          if (rc == MPI_SUCCESS && req) {
                              uint32_t number = nextRequestNumber();
                              describeRequest(e, number);
                              rememberRequest(*req, {RequestKind::Send, e.peer, tag, e.bytes,
                                                     e.commId, c, type, number});
                          }
                      });
}

} // namespace

namespace hpcprof::agent::mpi {
/// Bytes a completed receive delivered, from its status (-1 if unknown).
int64_t receivedBytes(const MPI_Status* status, MPI_Datatype type) {
    auto fn = g_getCount.get();
    int n = 0;
    if (!fn || !status || fn(status, type, &n) != MPI_SUCCESS || n == MPI_UNDEFINED) return -1;
    return typeBytes(type, n);
}
} // namespace hpcprof::agent::mpi

namespace {

struct SendHalf {
    int dest; ///< in the communicator
    int tag;
    int64_t bytes;
};

/// MPI_Sendrecv(_replace): the event carries the send half (peer = dest, tag, bytes sent). Both
/// halves are also written as completions of the call itself, under two fresh request numbers,
/// so that the analysis matches each half with its partner like a request posted at the call's
/// entry and completed at its end (the call waits for both). A half whose partner is
/// MPI_PROC_NULL moves nothing and is not written.
void describeSendrecv(MpiEvent& e, const CommInfo* c, int rc, const SendHalf& send,
                      const MPI_Status& st, MPI_Datatype rtype) {
    e.peer = worldRankOf(c, send.dest);
    e.tag = send.tag;
    e.commId = c ? c->keyId : 0;
    e.bytes = send.bytes;
    if (rc != MPI_SUCCESS) return;
    const int32_t source = worldRankOf(c, st.MPI_SOURCE);
    const uint32_t number =
        __atomic_fetch_add(&nextRequestNumberCounter(), 2u, __ATOMIC_RELAXED);
    if (e.peer >= 0) recordCompletion(false, number, e.peer, send.tag, send.bytes);
    if (source >= 0)
        recordCompletion(true, number + 1, source, st.MPI_TAG, receivedBytes(&st, rtype));
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm) {
    return blockingSend(g_send, Op::MpiSend, buf, count, type, dest, tag, comm);
}
HPCPROF_PMPI_ALIAS(MPI_Send)

HPCPROF_MPI_EXPORT int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                 MPI_Comm comm) {
    return blockingSend(g_bsend, Op::MpiBsend, buf, count, type, dest, tag, comm);
}
HPCPROF_PMPI_ALIAS(MPI_Bsend)

HPCPROF_MPI_EXPORT int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                 MPI_Comm comm) {
    return blockingSend(g_ssend, Op::MpiSsend, buf, count, type, dest, tag, comm);
}
HPCPROF_PMPI_ALIAS(MPI_Ssend)

HPCPROF_MPI_EXPORT int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                 MPI_Comm comm) {
    return blockingSend(g_rsend, Op::MpiRsend, buf, count, type, dest, tag, comm);
}
HPCPROF_PMPI_ALIAS(MPI_Rsend)

HPCPROF_MPI_EXPORT int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                 MPI_Comm comm, MPI_Request* req) {
    return nonblockingSend(g_isend, Op::MpiIsend, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Isend)

HPCPROF_MPI_EXPORT int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                  MPI_Comm comm, MPI_Request* req) {
    return nonblockingSend(g_ibsend, Op::MpiIbsend, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Ibsend)

HPCPROF_MPI_EXPORT int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                  MPI_Comm comm, MPI_Request* req) {
    return nonblockingSend(g_issend, Op::MpiIssend, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Issend)

HPCPROF_MPI_EXPORT int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                  MPI_Comm comm, MPI_Request* req) {
    return nonblockingSend(g_irsend, Op::MpiIrsend, buf, count, type, dest, tag, comm, req);
}
HPCPROF_PMPI_ALIAS(MPI_Irsend)

HPCPROF_MPI_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
                                MPI_Comm comm, MPI_Status* status) {
    auto fn = g_recv.get();
    if (!fn) return kNoMpi;
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    CommInfo* c = nullptr;
    // At entry: the source and tag asked for (-1: any) and the size of the buffer.
    auto atEntry = [&](MpiEvent& e) {
        c = awaitSource(e, comm, source, tag);
        e.bytes = typeBytes(type, count);
    };
    return tracedCallAt(Op::MpiRecv, atEntry,
                        [&] { return fn(buf, count, type, source, tag, comm, st); },
                        [&](MpiEvent& e, int rc) {
                            e.bytes = -1; // what the status says, or nothing
                            if (describeStatus(e, c ? c : lookupComm(comm), rc, *st))
                                e.bytes = receivedBytes(st, type);
                        });
}
HPCPROF_PMPI_ALIAS(MPI_Recv)

HPCPROF_MPI_EXPORT int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                                 MPI_Comm comm, MPI_Request* req) {
    auto fn = g_irecv.get();
    if (!fn) return kNoMpi;
    return tracedCall(Op::MpiIrecv, [&] { return fn(buf, count, type, source, tag, comm, req); },
                      [&](MpiEvent& e, int rc) {
                          CommInfo* c = lookupComm(comm);
                          e.peer = worldRankOf(c, source);
                          e.tag = tag;
                          e.commId = c ? c->keyId : 0;
                          // Bytes arrive at completion: the wait or test reports them.
                          if (rc == MPI_SUCCESS && req) {
                              uint32_t number = nextRequestNumber();
                              describeRequest(e, number);
                              rememberRequest(*req, {RequestKind::Recv, e.peer, tag,
                                                     typeBytes(type, count), e.commId, c, type,
                                                     number});
                          }
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Irecv)

HPCPROF_MPI_EXPORT int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest,
                                    int stag, void* rbuf, int rcount, MPI_Datatype rtype,
                                    int source, int rtag, MPI_Comm comm, MPI_Status* status) {
    auto fn = g_sendrecv.get();
    if (!fn) return kNoMpi;
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    // While it runs, the call names its receive (what it waits to hear from); once returned, its
    // send half (describeSendrecv). The communicator is looked up once, at the entry.
    CommInfo* c = nullptr;
    return tracedCallAt(
        Op::MpiSendrecv,
        [&](MpiEvent& e) {
            c = awaitSource(e, comm, source, rtag);
            e.bytes = typeBytes(rtype, rcount);
        },
        [&] {
            return fn(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                      st);
        },
        [&](MpiEvent& e, int rc) {
            describeSendrecv(e, c, rc, {dest, stag, typeBytes(stype, scount)}, *st, rtype);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Sendrecv)

HPCPROF_MPI_EXPORT int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest,
                                            int stag, int source, int rtag, MPI_Comm comm,
                                            MPI_Status* status) {
    auto fn = g_sendrecvReplace.get();
    if (!fn) return kNoMpi;
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    CommInfo* c = nullptr;
    return tracedCallAt(
        Op::MpiSendrecvReplace,
        [&](MpiEvent& e) {
            c = awaitSource(e, comm, source, rtag);
            e.bytes = typeBytes(type, count);
        },
        [&] { return fn(buf, count, type, dest, stag, source, rtag, comm, st); },
        [&](MpiEvent& e, int rc) {
            describeSendrecv(e, c, rc, {dest, stag, typeBytes(type, count)}, *st, type);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Sendrecv_replace)

HPCPROF_MPI_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    auto fn = g_probe.get();
    if (!fn) return kNoMpi;
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    CommInfo* c = nullptr;
    return tracedCallAt(
        Op::MpiProbe, [&](MpiEvent& e) { c = awaitSource(e, comm, source, tag); },
        [&] { return fn(source, tag, comm, st); },
        [&](MpiEvent& e, int rc) { describeStatus(e, c, rc, *st); });
}
HPCPROF_PMPI_ALIAS(MPI_Probe)

HPCPROF_MPI_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
                                  MPI_Status* status) {
    auto fn = g_iprobe.get();
    if (!fn) return kNoMpi;
    return tracedProbe(Op::MpiIprobe, comm, flag, status,
                       [&](MPI_Status* st) { return fn(source, tag, comm, flag, st); },
                       [](MpiEvent&, CommInfo*, const MPI_Status&) {});
}
HPCPROF_PMPI_ALIAS(MPI_Iprobe)
