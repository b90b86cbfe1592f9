// SPDX-License-Identifier: MIT
#include "mpi_abi.hpp"

#include <dlfcn.h>

namespace hpcprof::agent::mpi {

namespace {
MPI_Comm g_world, g_self, g_nullComm;
MPI_Datatype g_byte;
MPI_Request g_nullRequest;
} // namespace

#if defined(OPEN_MPI)
// Open MPI: handles are pointers to structures exported by libmpi.
namespace {
template <typename T> bool lookup(T& out, const char* symbol) {
    void* p = dlsym(RTLD_DEFAULT, symbol);
    out = reinterpret_cast<T>(p);
    return p != nullptr;
}
} // namespace

bool resolvePredefinedHandles() {
    bool ok = lookup(g_world, "ompi_mpi_comm_world");
    ok &= lookup(g_self, "ompi_mpi_comm_self");
    ok &= lookup(g_nullComm, "ompi_mpi_comm_null");
    ok &= lookup(g_byte, "ompi_mpi_byte");
    ok &= lookup(g_nullRequest, "ompi_request_null");
    return ok;
}
#else
// ABIs where handles are compile-time integers (MPICH and its derivatives).
bool resolvePredefinedHandles() {
    g_world = MPI_COMM_WORLD;
    g_self = MPI_COMM_SELF;
    g_nullComm = MPI_COMM_NULL;
    g_byte = MPI_BYTE;
    g_nullRequest = MPI_REQUEST_NULL;
    return true;
}
#endif

MPI_Comm worldComm() { return g_world; }
MPI_Comm selfComm() { return g_self; }
MPI_Comm nullComm() { return g_nullComm; }
MPI_Datatype byteType() { return g_byte; }
MPI_Request nullRequest() { return g_nullRequest; }
// These are plain constants (casts of small integers) in every known ABI.
MPI_Status* statusIgnore() { return MPI_STATUS_IGNORE; }
MPI_Status* statusesIgnore() { return MPI_STATUSES_IGNORE; }
void* inPlace() { return MPI_IN_PLACE; }

} // namespace hpcprof::agent::mpi
