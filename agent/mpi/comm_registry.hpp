// SPDX-License-Identifier: MIT
// What the wrappers know about each communicator: a key that every member computes identically
// (so instance k of a collective matches across ranks), the per-communicator collective counter,
// and the world ranks of its members (to report peers as world ranks).
//
// Keys: "world" for MPI_COMM_WORLD; a derived communicator is "<parent key>.<n>@<first world
// rank of its members>", where n counts creation calls on the parent (collective, so every
// member counts alike) and the first member tells apart the communicators one split creates.
// Lookups are lock-free; registration (communicator creation, rare) takes a spinlock.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace hpcprof::agent::mpi {

struct CommInfo {
    MPI_Comm handle;
    uint32_t keyId;        ///< interned key string (0 if it could not be interned)
    int size;
    int myRank;            ///< this process's rank in the communicator
    int* worldRanks;       ///< world rank of each member; nullptr = identity (the world)
    uint32_t collectives;  ///< next collective sequence number (atomic)
    uint32_t creations;    ///< communicator-creation calls made on this communicator (atomic)
    char key[192];
};

/// Registers MPI_COMM_WORLD and MPI_COMM_SELF after MPI_Init.
void registerPredefinedComms(int worldRank, int worldSize);

/// The communicator's info; unknown communicators (created before hpcprof could see them) get
/// an entry keyed by their handle, which does not match across ranks.
CommInfo* lookupComm(MPI_Comm comm);

/// Registers `child`, created by a creation call on `parent` whose sequence number is
/// `creationIndex` (taken before the call). MPI_COMM_NULL children are ignored.
CommInfo* registerChildComm(CommInfo* parent, uint32_t creationIndex, MPI_Comm child,
                            const char* suffix);

/// Forgets a freed communicator.
void unregisterComm(MPI_Comm comm);

/// World rank of `rank` in `info` (MPI_ANY_SOURCE, MPI_PROC_NULL pass through as -1).
int worldRankOf(const CommInfo* info, int rank);

} // namespace hpcprof::agent::mpi
