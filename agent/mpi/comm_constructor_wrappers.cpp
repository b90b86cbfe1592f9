// SPDX-License-Identifier: MIT
// The communicator constructors beyond dup/split/create (setup_wrappers.cpp): topologies
// (MPI_Cart_sub, MPI_Graph_create, MPI_Dist_graph_create(_adjacent)), intercommunicators
// (MPI_Intercomm_create, MPI_Intercomm_merge), the non-blocking MPI_Comm_idup and, where the
// library is MPI-4, MPI_Comm_idup_with_info and the group-based constructors. Each registers
// the new communicator so that its collectives match across ranks (comm_registry.hpp has the
// keys). Open MPI's Fortran bindings call these C PMPI_ functions, so Fortran is covered too.
#include "comm_creation.hpp"
#include "mpi_abi.hpp"
#include "request_registry.hpp"

using namespace hpcprof::agent::mpi;

namespace {

RealMpi<int (*)(MPI_Comm, const int[], MPI_Comm*)> g_cartSub("PMPI_Cart_sub");
RealMpi<int (*)(MPI_Comm, int, const int[], const int[], int, MPI_Comm*)> g_graphCreate(
    "PMPI_Graph_create");
RealMpi<int (*)(MPI_Comm, int, const int[], const int[], const int[], const int[], MPI_Info, int,
                MPI_Comm*)>
    g_distGraphCreate("PMPI_Dist_graph_create");
RealMpi<int (*)(MPI_Comm, int, const int[], const int[], int, const int[], const int[], MPI_Info,
                int, MPI_Comm*)>
    g_distGraphCreateAdjacent("PMPI_Dist_graph_create_adjacent");
RealMpi<int (*)(MPI_Comm, int, MPI_Comm, int, int, MPI_Comm*)> g_intercommCreate(
    "PMPI_Intercomm_create");
RealMpi<int (*)(MPI_Comm, int, MPI_Comm*)> g_intercommMerge("PMPI_Intercomm_merge");
RealMpi<int (*)(MPI_Comm, MPI_Comm*, MPI_Request*)> g_commIdup("PMPI_Comm_idup");

/// MPI_Comm_idup(_with_info): the key is taken at the call like a blocking dup's (a non-blocking
/// collective: every member calls it in the same order). The communicator is registered at the
/// call when the library hands out its handle there (Open MPI does; the standard only promises
/// it at completion): an MPI that fills it in later leaves it unknown (reported by the analysis).
template <typename Call>
int idupComm(Op op, MPI_Comm comm, MPI_Comm* out, MPI_Request* req, Call&& call) {
    CommInfo* p = lookupComm(comm);
    uint32_t index = p ? __atomic_fetch_add(&p->creations, 1, __ATOMIC_RELAXED) : 0;
    return creationCall(op, p, call, [&]() -> CommInfo* {
        if (req && p) rememberRequest(*req, {RequestKind::Other, -1, 0, -1, p->keyId, p, {}, 0});
        return out && *out != nullComm() ? registerChildComm(p, index, *out, "") : nullptr;
    });
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remainDims[], MPI_Comm* out) {
    auto fn = g_cartSub.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCartSub, comm, out, "", [&] { return fn(comm, remainDims, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Cart_sub)

HPCPROF_MPI_EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                                        const int edges[], int reorder, MPI_Comm* out) {
    auto fn = g_graphCreate.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiGraphCreate, comm, out, "",
                      [&] { return fn(comm, nnodes, index, edges, reorder, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Graph_create)

HPCPROF_MPI_EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                                             const int degrees[], const int destinations[],
                                             const int weights[], MPI_Info info, int reorder,
                                             MPI_Comm* out) {
    auto fn = g_distGraphCreate.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiDistGraphCreate, comm, out, "", [&] {
        return fn(comm, n, sources, degrees, destinations, weights, info, reorder, out);
    });
}
HPCPROF_PMPI_ALIAS(MPI_Dist_graph_create)

HPCPROF_MPI_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree,
                                                      const int sources[], const int sourceWeights[],
                                                      int outdegree, const int destinations[],
                                                      const int destWeights[], MPI_Info info,
                                                      int reorder, MPI_Comm* out) {
    auto fn = g_distGraphCreateAdjacent.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiDistGraphCreateAdjacent, comm, out, "", [&] {
        return fn(comm, indegree, sources, sourceWeights, outdegree, destinations, destWeights, info,
                  reorder, out);
    });
}
HPCPROF_PMPI_ALIAS(MPI_Dist_graph_create_adjacent)

// The two groups pass different local communicators and only the leaders see the peer
// communicator: no parent key is common to all members, so the key names the members.
HPCPROF_MPI_EXPORT int MPI_Intercomm_create(MPI_Comm local, int localLeader, MPI_Comm peer,
                                            int remoteLeader, int tag, MPI_Comm* out) {
    auto fn = g_intercommCreate.get();
    if (!fn) return kNoMpi;
    return creationCall(
        Op::MpiIntercommCreate, lookupComm(local),
        [&] { return fn(local, localLeader, peer, remoteLeader, tag, out); },
        [&]() -> CommInfo* { return out ? registerByMembers(*out, "inter", nullptr) : nullptr; });
}
HPCPROF_PMPI_ALIAS(MPI_Intercomm_create)

// Collective over both groups of the intercommunicator, which count its creations alike.
HPCPROF_MPI_EXPORT int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm* out) {
    auto fn = g_intercommMerge.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiIntercommMerge, inter, out, "", [&] { return fn(inter, high, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Intercomm_merge)

HPCPROF_MPI_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* out, MPI_Request* req) {
    auto fn = g_commIdup.get();
    if (!fn) return kNoMpi;
    return idupComm(Op::MpiCommIdup, comm, out, req, [&] { return fn(comm, out, req); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_idup)

// MPI-4 constructors: compiled only against an MPI-4 mpi.h (Open MPI 4.1 is MPI 3.1).
#if MPI_VERSION >= 4
namespace {
RealMpi<int (*)(MPI_Comm, MPI_Info, MPI_Comm*, MPI_Request*)> g_commIdupWithInfo(
    "PMPI_Comm_idup_with_info");
RealMpi<int (*)(MPI_Group, const char*, MPI_Info, MPI_Errhandler, MPI_Comm*)> g_fromGroup(
    "PMPI_Comm_create_from_group");
RealMpi<int (*)(MPI_Group, int, MPI_Group, int, const char*, MPI_Info, MPI_Errhandler, MPI_Comm*)>
    g_interFromGroups("PMPI_Intercomm_create_from_groups");
} // namespace

HPCPROF_MPI_EXPORT int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* out,
                                               MPI_Request* req) {
    auto fn = g_commIdupWithInfo.get();
    if (!fn) return kNoMpi;
    return idupComm(Op::MpiCommIdupWithInfo, comm, out, req,
                    [&] { return fn(comm, info, out, req); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_idup_with_info)

// No parent communicator: the members and the string tag (which they agree on) name it.
HPCPROF_MPI_EXPORT int MPI_Comm_create_from_group(MPI_Group group, const char* tag, MPI_Info info,
                                                  MPI_Errhandler errh, MPI_Comm* out) {
    auto fn = g_fromGroup.get();
    if (!fn) return kNoMpi;
    return creationCall(
        Op::MpiCommCreateFromGroup, nullptr, [&] { return fn(group, tag, info, errh, out); },
        [&]() -> CommInfo* { return out ? registerByMembers(*out, "group", tag) : nullptr; });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_create_from_group)

HPCPROF_MPI_EXPORT int MPI_Intercomm_create_from_groups(MPI_Group local, int localLeader,
                                                        MPI_Group remote, int remoteLeader,
                                                        const char* tag, MPI_Info info,
                                                        MPI_Errhandler errh, MPI_Comm* out) {
    auto fn = g_interFromGroups.get();
    if (!fn) return kNoMpi;
    return creationCall(
        Op::MpiIntercommCreateFromGroups, nullptr,
        [&] { return fn(local, localLeader, remote, remoteLeader, tag, info, errh, out); },
        [&]() -> CommInfo* { return out ? registerByMembers(*out, "inter", tag) : nullptr; });
}
HPCPROF_PMPI_ALIAS(MPI_Intercomm_create_from_groups)
#endif
