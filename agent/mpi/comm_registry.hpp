// SPDX-License-Identifier: MIT
// What the wrappers know about each communicator: a key that every member computes identically
// (so instance k of a collective matches across ranks), the per-communicator collective counter,
// and the world ranks of the ranks its calls name (to report peers as world ranks).
//
// Keys: "world" for MPI_COMM_WORLD; a communicator created by a call on a parent is
// "<parent key>.<n>@<first world rank>", where n counts creation calls on the parent (collective
// over the parent, so every member counts alike) and the first world rank tells apart the
// communicators one split creates. A communicator created without a parent every member shares
// (MPI_Intercomm_create: each group passes its own local communicator; MPI-4's
// MPI_Comm_create_from_group) is keyed by its members instead: "inter(0-1|2-3).k",
// "group(0,2)[tag].k", k counting earlier ones with the same members.
// Lookups are lock-free; registration (communicator creation, rare) takes a spinlock.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace hpcprof::agent::mpi {

struct CommInfo {
    MPI_Comm handle;
    uint32_t keyId;        ///< interned key string (0 if it could not be interned)
    /// Members: the group's size; for an intercommunicator both groups together (a collective
    /// on it is entered by every process of both groups, which is what matching counts).
    int size;
    /// Ranks the calls name range over this many processes: the group, or for an
    /// intercommunicator the remote group (point-to-point partners and roots are remote ranks).
    int peerSize;
    int myRank;            ///< this process's rank in the (local) group
    int* worldRanks;       ///< world rank of each rank the calls name; nullptr = identity (world)
    bool inter;            ///< an intercommunicator
    uint32_t collectives;  ///< next collective sequence number (atomic)
    uint32_t creations;    ///< communicator-creation calls made on this communicator (atomic)
    char key[192];
};

/// Registers MPI_COMM_WORLD and MPI_COMM_SELF after MPI_Init.
void registerPredefinedComms(int worldRank, int worldSize);

/// The communicator's info; unknown communicators (created where hpcprof could not see it) get
/// an entry keyed "unknown@<world rank>.<n>", which does not match across ranks.
CommInfo* lookupComm(MPI_Comm comm);

/// Registers `child`, created by a creation call on `parent` whose sequence number is
/// `creationIndex` (taken before the call). MPI_COMM_NULL children are ignored.
CommInfo* registerChildComm(CommInfo* parent, uint32_t creationIndex, MPI_Comm child,
                            const char* suffix);

/// Registers a communicator created without a shared parent, keyed by its members (both groups
/// for an intercommunicator): "<prefix>(<members>)[<tag>].<k>". `tag` may be null.
CommInfo* registerByMembers(MPI_Comm comm, const char* prefix, const char* tag);

/// Forgets a freed communicator.
void unregisterComm(MPI_Comm comm);

/// World rank of `rank` in `info` (MPI_ANY_SOURCE, MPI_PROC_NULL pass through as -1; MPI_ROOT,
/// which only the root of an intercommunicator collective passes, is this process).
int worldRankOf(const CommInfo* info, int rank);

} // namespace hpcprof::agent::mpi
