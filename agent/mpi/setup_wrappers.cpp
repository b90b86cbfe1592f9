// SPDX-License-Identifier: MIT
// MPI start-up and tear-down (rank identity, clock offsets) and communicator creation (so every
// member derives the same communicator key).
#include <cstdio>

#include "clock_sync.hpp"
#include "comm_creation.hpp"
#include "mpi_abi.hpp"
#include "mpi_call.hpp"
#include "request_registry.hpp"

using namespace hpcprof::agent::mpi;

namespace {

RealMpi<int (*)(int*, char***)> g_init("PMPI_Init");
RealMpi<int (*)(int*, char***, int, int*)> g_initThread("PMPI_Init_thread");
RealMpi<int (*)()> g_finalize("PMPI_Finalize");
RealMpi<int (*)(MPI_Comm, int)> g_abort("PMPI_Abort");
RealMpi<int (*)(MPI_Comm, int*)> g_commRank("PMPI_Comm_rank");
RealMpi<int (*)(MPI_Comm, int*)> g_commSize("PMPI_Comm_size");
RealMpi<int (*)(MPI_Comm, MPI_Comm*)> g_commDup("PMPI_Comm_dup");
RealMpi<int (*)(MPI_Comm, MPI_Info, MPI_Comm*)> g_commDupWithInfo("PMPI_Comm_dup_with_info");
RealMpi<int (*)(MPI_Comm, int, int, MPI_Comm*)> g_commSplit("PMPI_Comm_split");
RealMpi<int (*)(MPI_Comm, int, int, MPI_Info, MPI_Comm*)> g_commSplitType("PMPI_Comm_split_type");
RealMpi<int (*)(MPI_Comm, MPI_Group, MPI_Comm*)> g_commCreate("PMPI_Comm_create");
RealMpi<int (*)(MPI_Comm, MPI_Group, int, MPI_Comm*)> g_commCreateGroup("PMPI_Comm_create_group");
RealMpi<int (*)(MPI_Comm, int, const int[], const int[], int, MPI_Comm*)> g_cartCreate(
    "PMPI_Cart_create");
RealMpi<int (*)(MPI_Comm*)> g_commFree("PMPI_Comm_free");
RealMpi<int (*)(int*)> g_queryThread("PMPI_Query_thread");

int g_worldRank = -1, g_worldSize = -1;

// Everything hpcprof needs once MPI runs: handles, rank, communicators, clock offsets.
void afterInit() {
    if (!resolvePredefinedHandles()) return;
    auto rank = g_commRank.get();
    auto size = g_commSize.get();
    if (!rank || !size) return;
    rank(worldComm(), &g_worldRank);
    size(worldComm(), &g_worldSize);
    hpcprof_agent_set_rank(g_worldRank, g_worldSize, "MPI");
    // The thread level MPI gave (MPI_Init may give more than single): below multiple, the
    // program calls MPI from one thread at a time, and the registry's receive count needs no
    // locked add. Unknown: it keeps it.
    int level = MPI_THREAD_MULTIPLE;
    if (auto query = g_queryThread.get(); query && query(&level) == MPI_SUCCESS &&
                                          level < MPI_THREAD_MULTIPLE)
        countReceivesUnshared();
    registerPredefinedComms(g_worldRank, g_worldSize);
    measureClockOffsets(0, g_worldRank, g_worldSize);
}

template <typename Call> int initCall(Op op, Call&& call) {
    bool rec = enter();
    uint64_t t0 = rec ? callStart() : ticksNow();
    int rc = call();
    if (rc == MPI_SUCCESS) afterInit(); // inside the depth guard: our own traffic is not recorded
    // The call ends for the program when the wrapper returns: the agent's clock measurement is
    // part of its start-up, not the program's computation that follows.
    uint64_t t1 = ticksNow();
    if (rec) {
        MpiEvent e{op};
        if (CommInfo* w = g_worldRank >= 0 ? lookupComm(worldComm()) : nullptr) {
            e.commId = w->keyId;
            e.tag = w->size;
            e.flags = hpcprof::schema::raw::kFlagTagIsCommSize;
        }
        record(e, t0, t1);
    }
    leave();
    return rc;
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Init(int* argc, char*** argv) {
    auto fn = g_init.get();
    if (!fn) return kNoMpi;
    return initCall(Op::MpiInit, [&] { return fn(argc, argv); });
}
HPCPROF_PMPI_ALIAS(MPI_Init)

HPCPROF_MPI_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    auto fn = g_initThread.get();
    if (!fn) return kNoMpi;
    return initCall(Op::MpiInitThread, [&] { return fn(argc, argv, required, provided); });
}
HPCPROF_PMPI_ALIAS(MPI_Init_thread)

HPCPROF_MPI_EXPORT int MPI_Finalize() {
    auto fn = g_finalize.get();
    if (!fn) return kNoMpi;
    bool rec = enter();
    uint64_t t0 = rec ? callStart() : ticksNow();
    if (g_worldRank >= 0) measureClockOffsets(1, g_worldRank, g_worldSize);
    int rc = fn();
    uint64_t t1 = ticksNow();
    if (rec) record(MpiEvent{Op::MpiFinalize}, t0, t1);
    leave();
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_Finalize)

HPCPROF_MPI_EXPORT int MPI_Abort(MPI_Comm comm, int code) {
    auto fn = g_abort.get();
    if (!fn) return kNoMpi;
    if (enter()) {
        uint64_t t = ticksNow();
        MpiEvent e{Op::MpiAbort};
        e.tag = code;
        record(e, t, t);
    }
    // The job is torn down from here: say so before the real call never returns.
    hpcprof_agent_mark_end(uint32_t(hpcprof::schema::raw::EndState::Aborted), code);
    int rc = fn(comm, code);
    leave();
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_Abort)

HPCPROF_MPI_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
    auto fn = g_commDup.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCommDup, comm, out, "", [&] { return fn(comm, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_dup)

HPCPROF_MPI_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* out) {
    auto fn = g_commDupWithInfo.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCommDupWithInfo, comm, out, "", [&] { return fn(comm, info, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_dup_with_info)

HPCPROF_MPI_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
    auto fn = g_commSplit.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCommSplit, comm, out, "", [&] { return fn(comm, color, key, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_split)

HPCPROF_MPI_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                           MPI_Comm* out) {
    auto fn = g_commSplitType.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCommSplitType, comm, out, "",
                      [&] { return fn(comm, type, key, info, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_split_type)

HPCPROF_MPI_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
    auto fn = g_commCreate.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCommCreate, comm, out, "", [&] { return fn(comm, group, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_create)

HPCPROF_MPI_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                             MPI_Comm* out) {
    auto fn = g_commCreateGroup.get();
    if (!fn) return kNoMpi;
    // Only the group's members call it, so the parent's counter is not shared by all members
    // of the parent: the key uses the tag instead (members agree on it by definition).
    char suffix[32];
    std::snprintf(suffix, sizeof(suffix), "g%d", tag);
    return createComm(Op::MpiCommCreateGroup, comm, out, suffix,
                      [&] { return fn(comm, group, tag, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Comm_create_group)

HPCPROF_MPI_EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                                       const int periods[], int reorder, MPI_Comm* out) {
    auto fn = g_cartCreate.get();
    if (!fn) return kNoMpi;
    return createComm(Op::MpiCartCreate, comm, out, "",
                      [&] { return fn(comm, ndims, dims, periods, reorder, out); });
}
HPCPROF_PMPI_ALIAS(MPI_Cart_create)

HPCPROF_MPI_EXPORT int MPI_Comm_free(MPI_Comm* comm) {
    auto fn = g_commFree.get();
    if (!fn) return kNoMpi;
    MPI_Comm old = comm ? *comm : nullComm();
    CommInfo* info = lookupComm(old);
    int rc = tracedCall(Op::MpiCommFree, [&] { return fn(comm); }, [&](MpiEvent& e, int) {
        if (info) {
            e.commId = info->keyId;
            e.tag = info->size;
            e.flags = hpcprof::schema::raw::kFlagTagIsCommSize;
        }
    });
    if (rc == MPI_SUCCESS) unregisterComm(old);
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_Comm_free)
