// SPDX-License-Identifier: MIT
// Clock offsets of every rank against rank 0, measured at MPI_Init and MPI_Finalize
// (Score-P style): rank 0 exchanges kPingPongs empty messages with each rank in turn and keeps the
// exchange with the smallest round trip; offset = remote time - midpoint of rank 0's send and
// receive times. The store interpolates linearly between the two measurements.
#pragma once

#include <mpi.h>

namespace hpcprof::agent::mpi {

/// Runs the exchange on a private duplicate of MPI_COMM_WORLD and stores the result in the
/// process header (which = 0 at init, 1 at finalize). Uses the real PMPI functions only.
void measureClockOffsets(int which, int worldRank, int worldSize);

} // namespace hpcprof::agent::mpi
