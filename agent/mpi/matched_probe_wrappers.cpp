// SPDX-License-Identifier: MIT
// Matched probes and receives (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv): recorded like
// MPI_Probe / MPI_Iprobe / MPI_Recv / MPI_Irecv. A message handle does not name its
// communicator, so each thread remembers its last few matched messages (handle, communicator,
// source, tag) for the receive that follows the probe.
#include "handle_map.hpp"
#include "mpi_abi.hpp"
#include "mpi_call.hpp"
#include "request_registry.hpp"

using namespace hpcprof::agent::mpi;

namespace hpcprof::agent::mpi {
int64_t receivedBytes(const MPI_Status* status, MPI_Datatype type);
}

namespace {

RealMpi<int (*)(int, int, MPI_Comm, MPI_Message*, MPI_Status*)> g_mprobe("PMPI_Mprobe");
RealMpi<int (*)(int, int, MPI_Comm, int*, MPI_Message*, MPI_Status*)> g_improbe("PMPI_Improbe");
RealMpi<int (*)(void*, int, MPI_Datatype, MPI_Message*, MPI_Status*)> g_mrecv("PMPI_Mrecv");
RealMpi<int (*)(void*, int, MPI_Datatype, MPI_Message*, MPI_Request*)> g_imrecv("PMPI_Imrecv");

struct Matched {
    uint64_t handle; // 0 = empty
    CommInfo* comm;
    int32_t source;  // world rank
    int32_t tag;
};
constexpr int kRemembered = 4; // messages probed but not yet received, per thread
thread_local Matched t_matched[kRemembered] __attribute__((tls_model("initial-exec")));
thread_local unsigned t_nextMatched __attribute__((tls_model("initial-exec")));

void rememberMatched(MPI_Message m, CommInfo* comm, int32_t source, int32_t tag) {
    t_matched[t_nextMatched++ % kRemembered] = {handleBits(m), comm, source, tag};
}

/// The probe that matched `m` (taken out), or an empty entry.
Matched takeMatched(MPI_Message m) {
    uint64_t h = handleBits(m);
    for (auto& e : t_matched)
        if (h && e.handle == h) {
            Matched out = e;
            e.handle = 0;
            return out;
        }
    return {0, nullptr, -1, 0};
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                                  MPI_Status* status) {
    auto fn = g_mprobe.get();
    if (!fn) return kNoMpi;
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    CommInfo* c = nullptr;
    return tracedCallAt(
        Op::MpiMprobe, [&](MpiEvent& e) { c = awaitSource(e, comm, source, tag); },
        [&] { return fn(source, tag, comm, message, st); },
        [&](MpiEvent& e, int rc) {
            if (describeStatus(e, c, rc, *st) && message) rememberMatched(*message, c, e.peer, e.tag);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Mprobe)

HPCPROF_MPI_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                                   MPI_Message* message, MPI_Status* status) {
    auto fn = g_improbe.get();
    if (!fn) return kNoMpi;
    return tracedProbe(
        Op::MpiImprobe, comm, flag, status,
        [&](MPI_Status* st) { return fn(source, tag, comm, flag, message, st); },
        [&](MpiEvent& e, CommInfo* c, const MPI_Status&) {
            if (message) rememberMatched(*message, c, e.peer, e.tag);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Improbe)

HPCPROF_MPI_EXPORT int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                                 MPI_Status* status) {
    auto fn = g_mrecv.get();
    if (!fn) return kNoMpi;
    Matched m = message ? takeMatched(*message) : Matched{0, nullptr, -1, 0};
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    return tracedCall(Op::MpiMrecv, [&] { return fn(buf, count, type, message, st); },
                      [&](MpiEvent& e, int rc) {
                          // MPI_MESSAGE_NO_PROC gives source MPI_PROC_NULL: no peer.
                          if (describeStatus(e, m.comm, rc, *st)) e.bytes = receivedBytes(st, type);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Mrecv)

HPCPROF_MPI_EXPORT int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
                                  MPI_Request* req) {
    auto fn = g_imrecv.get();
    if (!fn) return kNoMpi;
    Matched m = message ? takeMatched(*message) : Matched{0, nullptr, -1, 0};
    return tracedCall(Op::MpiImrecv, [&] { return fn(buf, count, type, message, req); },
                      [&](MpiEvent& e, int rc) {
                          e.commId = m.comm ? m.comm->keyId : 0;
                          e.peer = m.source;
                          e.tag = m.tag;
                          if (rc == MPI_SUCCESS && req) {
                              uint32_t number = nextRequestNumber();
                              describeRequest(e, number);
                              rememberRequest(*req, {RequestKind::Recv, m.source, m.tag,
                                                     typeBytes(type, count), e.commId, m.comm,
                                                     type, number});
                          }
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Imrecv)
