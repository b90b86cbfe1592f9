// SPDX-License-Identifier: MIT
// What each pending non-blocking request was (send or receive, peer, tag, bytes, communicator),
// so a wait or test that completes it can report which transfer finished and how long it blocked.
// A fixed open-addressing table; insert and remove are lock-free (one CAS), no allocation.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace hpcprof::agent::mpi {

enum class RequestKind : uint8_t { Send, Recv, Collective, Other };

struct RequestInfo {
    RequestKind kind;
    int32_t peer;     ///< world rank (receives from MPI_ANY_SOURCE: -1 until completed)
    int32_t tag;
    int64_t bytes;    ///< bytes posted (receives: the buffer size; the status gives the actual)
    uint32_t commId;
    const void* comm; ///< CommInfo*, to translate a wildcard receive's source
    MPI_Datatype datatype;
    uint32_t request; ///< request number (kFlagRequest on the posting event; see nextRequestNumber)
    bool persistent = false; ///< MPI_*_init: stays after completion until MPI_Request_free
    bool active = false;     ///< persistent: started and not yet completed
};

/// A new process-wide request number for a posted send or receive (one relaxed atomic add: the
/// registry insert that follows costs a CAS anyway). Thread-safe, async-signal-safe.
uint32_t nextRequestNumber();
/// The counter behind nextRequestNumber (MPI_Startall takes a block of numbers at once).
uint32_t& nextRequestNumberCounter();

/// Remembers `request` (no-op when the table is full: the completion is then recorded without
/// peer and bytes).
void rememberRequest(MPI_Request request, const RequestInfo& info);

/// Takes the info of a completed request out of the table; false if unknown. A persistent
/// request stays (inactive); an inactive one completes nothing (false).
bool takeRequest(MPI_Request request, RequestInfo& out);

/// The info of a pending request, left in the table and read in place (a wait's entry looks at a
/// few and publishes one); nullptr if unknown or an inactive persistent request. Valid until the
/// request completes (MPI forbids using one request from two threads at once). No allocation,
/// no system call.
const RequestInfo* pendingRequest(MPI_Request request);

/// MPI_Start of a persistent request: marks it active under request number `number` and gives
/// its info; false if unknown.
bool startRequest(MPI_Request request, uint32_t number, RequestInfo& out);

/// MPI_Request_free: forgets the request (its handle may come back for another one).
void forgetRequest(MPI_Request request);

/// How many receives the table holds pending, process-wide: remembered (MPI_Irecv, MPI_Imrecv)
/// or started (a persistent one) and not yet taken out or forgotten. A wait's entry looks
/// further among its requests for a receive only when this is not 0. Each change (a receive
/// posted or completed) is one relaxed atomic add while threads may call MPI at once (the
/// default), a plain add otherwise (see countReceivesUnshared); one relaxed load here.
/// Thread-safe, async-signal-safe.
int64_t pendingReceives();

/// After MPI_Init: MPI is called by one thread at a time (a thread level below
/// MPI_THREAD_MULTIPLE, whose calls the program orders), so the count of pending receives needs
/// no locked add.
void countReceivesUnshared();

} // namespace hpcprof::agent::mpi
