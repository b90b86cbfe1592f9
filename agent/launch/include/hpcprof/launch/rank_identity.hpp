// SPDX-License-Identifier: MIT
// Rank identity from the launcher's environment, before (or without) MPI.
#pragma once

namespace hpcprof::agent {

struct RankIdentity {
    int rank = -1;       ///< world rank, -1 = not a rank process
    int worldSize = -1;
    int localRank = -1;
    const char* source = ""; ///< the variable that gave the rank
};

/// Reads the variables of Open MPI, PMIx, PMI/MPICH, Slurm and torchrun, in that order.
/// getenv(name) is injectable for tests.
RankIdentity rankFromEnvironment(const char* (*getenvFn)(const char*) = nullptr);

} // namespace hpcprof::agent
