// SPDX-License-Identifier: MIT
// The shape every communicator-creation wrapper shares: the call is recorded (category
// mpi_setup) with the new communicator's key and size, or the parent's when the process gets
// MPI_COMM_NULL; the new communicator is registered before anything can use it.
#pragma once

#include "mpi_call.hpp"

namespace hpcprof::agent::mpi {

/// Runs a creation call; `registerChild()` registers what it created (after a successful call)
/// and returns its info, or nullptr. `fallback` names the call's communicator otherwise.
template <typename Call, typename Register>
int creationCall(Op op, CommInfo* fallback, Call&& call, Register&& registerChild) {
    bool rec = enter();
    uint64_t t0 = rec ? callStart() : ticksNow();
    int rc = call();
    uint64_t t1 = ticksNow();
    CommInfo* child = rc == MPI_SUCCESS ? registerChild() : nullptr;
    if (rec) {
        MpiEvent e{op};
        if (CommInfo* c = child ? child : fallback) {
            e.commId = c->keyId;
            e.tag = c->size;
            e.flags = schema::raw::kFlagTagIsCommSize;
        }
        record(e, t0, t1);
    }
    leave();
    return rc;
}

/// A communicator-creation call on `parent` (collective over it): the new communicator's key is
/// derived from the parent's key and its creation counter, identical on every member.
template <typename Call>
int createComm(Op op, MPI_Comm parent, MPI_Comm* out, const char* suffix, Call&& call) {
    CommInfo* p = lookupComm(parent);
    uint32_t index = p ? __atomic_fetch_add(&p->creations, 1, __ATOMIC_RELAXED) : 0;
    return creationCall(op, p, call, [&]() -> CommInfo* {
        return out ? registerChildComm(p, index, *out, suffix) : nullptr;
    });
}

} // namespace hpcprof::agent::mpi
