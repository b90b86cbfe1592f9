// SPDX-License-Identifier: MIT
// The agent's view of live NCCL communicators: key (shared by all members, so instance k of a
// collective matches across ranks), this rank, size, and the per-communicator collective counter.
//
// A fixed open-addressing table keyed by the ncclComm_t pointer. Creation and destruction are
// rare (CAS on the slot); lookups on every call are a few loads. No lock, no allocation.
#pragma once

#include <cstdint>

namespace hpcprof::agent::nccl {

struct CommState {
    void* comm;        ///< ncclComm_t; nullptr = free slot, kTombstone = destroyed
    uint64_t keyHash;  ///< identity shared by all members (hash of the ncclUniqueId, ...)
    uint32_t keyId;    ///< interned "nccl:<16 hex digits>"
    int32_t rank;
    int32_t size;
    uint32_t nextSeq;  ///< next collective instance (atomic)
    uint32_t splits;   ///< ncclCommSplit calls on this communicator (atomic)
};

/// Registers a new communicator; returns its state, or nullptr when the table is full.
CommState* addComm(void* comm, uint64_t keyHash, int rank, int size);
/// The state of a live communicator, or nullptr if it was created before recording began.
CommState* findComm(void* comm);
/// Forgets a destroyed communicator.
void removeComm(void* comm);

/// FNV-1a over bytes, continuing from `seed`.
uint64_t hashBytes(const void* data, uint64_t len, uint64_t seed = 0xcbf29ce484222325ull);

} // namespace hpcprof::agent::nccl
