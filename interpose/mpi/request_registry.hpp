// SPDX-License-Identifier: MIT
// What each pending non-blocking request was (send or receive, peer, tag, bytes, communicator),
// so a wait or test that completes it can report which transfer finished and how long it blocked.
// A fixed open-addressing table; insert and remove are lock-free (one CAS), no allocation.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace hpcprof::interpose::mpi {

enum class RequestKind : uint8_t { Send, Recv, Collective, Other };

struct RequestInfo {
    RequestKind kind;
    int32_t peer;     ///< world rank (receives from MPI_ANY_SOURCE: -1 until completed)
    int32_t tag;
    int64_t bytes;    ///< bytes posted (receives: the buffer size; the status gives the actual)
    uint32_t commId;
    const void* comm; ///< CommInfo*, to translate a wildcard receive's source
    MPI_Datatype datatype;
};

/// Remembers `request` (no-op when the table is full: the completion is then recorded without
/// peer and bytes).
void rememberRequest(MPI_Request request, const RequestInfo& info);

/// Takes the info of a completed request out of the table; false if unknown.
bool takeRequest(MPI_Request request, RequestInfo& out);

} // namespace hpcprof::interpose::mpi
