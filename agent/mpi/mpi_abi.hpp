// SPDX-License-Identifier: MIT
// Predefined MPI handles, obtained at run time. In some MPI ABIs (Open MPI) MPI_COMM_WORLD,
// MPI_BYTE and MPI_REQUEST_NULL are addresses of data symbols inside libmpi; referencing them at
// link time would make this module need libmpi at load, which breaks programs that load MPI later
// (Python with mpi4py) and programs without MPI. This is the only file that knows how each ABI
// spells them.
#pragma once

#include <mpi.h>

namespace hpcprof::agent::mpi {

/// Resolves the handles once libmpi is loaded (call after the real MPI_Init). False if the MPI
/// library's predefined objects cannot be found.
bool resolvePredefinedHandles();

MPI_Comm worldComm();
MPI_Comm selfComm();
MPI_Comm nullComm();
MPI_Datatype byteType();
MPI_Request nullRequest();
MPI_Status* statusIgnore();
MPI_Status* statusesIgnore();
void* inPlace();

} // namespace hpcprof::agent::mpi
