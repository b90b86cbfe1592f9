// SPDX-License-Identifier: MIT
// The hang family's result (Analysis::sections["hang"]): the calls each rank was inside when
// the job was last seen, and the diagnosis made of them. Present only when the trace holds
// unfinished calls (event_unfinished).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/status.hpp"

struct sqlite3;

namespace hpcprof::analyzer {

/// One unfinished call: a call its thread had not returned from when its process was last seen.
struct HangCall {
    int64_t eventId = 0;
    int64_t rank = -1;
    int64_t tid = 0;
    std::string name;         ///< the function (MPI_Barrier, read, ...)
    std::string cls;          ///< communication, io, sync, ...
    std::string communicator; ///< key, empty = none
    int64_t commSize = -1;    ///< -1 = unknown
    std::optional<int64_t> instance; ///< collective instance on the communicator
    std::optional<int64_t> peer;     ///< partner world rank (p2p), a rooted collective's root
    std::optional<int64_t> tag;
    std::string object;              ///< file, pipe, socket
    std::optional<int64_t> requestedBytes;
    std::optional<int64_t> requests; ///< how many requests a wait was given (MPI_Waitall of N)
    int64_t sinceNs = 0;  ///< entry, trace ns
    int64_t waitedNs = 0; ///< until the process was last seen
    bool collective() const { return instance.has_value() && !communicator.empty(); }
    bool pointToPoint() const { return !collective() && cls == "communication" && peer && *peer >= 0; }
    /// A thread polling an RDMA completion queue since its first empty poll (no call in flight).
    /// A busy poll shown "polling since its first unsuccessful answer" (the agent's
    /// runtime/polling_state.hpp): an RDMA CQ, a CUDA stream or event, a non-blocking NCCL
    /// communicator.
    bool polling() const {
        return name == "ibv_poll_cq" || name == "ibv_start_poll" || name == "cudaStreamQuery" ||
               name == "cudaEventQuery" || name == "cuStreamQuery" || name == "cuEventQuery" ||
               name == "ncclCommGetAsyncError";
    }
};

/// A rank's state when the job was last seen.
struct HangRank {
    int64_t rank = -1;
    std::vector<HangCall> calls; ///< its unfinished calls, the longest waiting first
    std::string lastCall;        ///< its last completed call, empty = none
    int64_t lastCallEndNs = 0;
    std::string endState;        ///< its process's end_state (abnormal: killed or hung and ended)
    /// The call that says what the rank waits for: its longest-waiting communication call, else
    /// its longest-waiting call, else a thread's polling of a completion queue; nullptr when it
    /// is inside no recorded call (computing).
    const HangCall* current() const;
};

/// Ranks waiting in one collective instance (op and instance) on one communicator.
struct CollectiveWait {
    std::string communicator;
    int64_t commSize = -1;
    std::string name;
    int64_t instance = 0;
    std::vector<int64_t> ranks;   ///< waiting in it
    std::vector<int64_t> missing; ///< members that are not in it (what they do: their HangRank)
};

/// Members of one communicator inside different collective calls (operation or instance).
struct CollectiveMismatch {
    std::string communicator;
    std::vector<std::pair<int64_t, std::string>> calls; ///< (rank, "MPI_Bcast #1"), by rank
};

/// Ranks each waiting for the next one's point-to-point operation, up to a rank that waits on
/// nobody (or back to a rank already in the chain: a deadlock cycle).
struct WaitChain {
    std::vector<int64_t> ranks;
    bool cycle = false;
    std::string end; ///< what the last rank does: "computing (...)", "in read of /x", ...
};

/// One rank's last collective on an NCCL communicator. NCCL returns at enqueue: the call's end
/// says the collective was enqueued, not that it completed on the GPU.
struct NcclRankState {
    int64_t rank = -1;
    std::optional<int64_t> instance; ///< the last collective instance it enqueued, none = no collective
    std::string call;                ///< that collective (ncclAllReduce, ...)
    /// Whether its completion was seen: "in_flight" (the rank is still inside the call),
    /// "kernel_ended" (its GPU kernel's end was recorded), "host_sync_returned" (a host
    /// synchronisation returned after it was enqueued), "not_seen".
    std::string completion;
    std::string blockedIn; ///< the call the rank is inside now (cudaStreamSynchronize, ...), empty = none
};

/// An NCCL communicator when the job was last seen: each member's last enqueued collective.
struct NcclCommunicatorState {
    std::string communicator;
    int64_t commSize = -1;
    std::vector<NcclRankState> ranks; ///< by rank (members without a collective: no instance)
    int64_t lastInstance = -1;        ///< the furthest instance a member enqueued
    std::string lastCall;             ///< its collective
    std::vector<int64_t> enqueued;    ///< members that enqueued lastInstance
    std::vector<int64_t> behind;      ///< members that never enqueued it
};

struct HangSection final : FamilySection {
    static constexpr const char* kName = "hang";
    std::vector<HangRank> ranks; ///< every rank, by rank
    int64_t unfinishedCalls = 0;
    std::vector<CollectiveWait> collectives;
    std::vector<CollectiveMismatch> mismatches;
    std::vector<WaitChain> chains;
    std::vector<NcclCommunicatorState> nccl; ///< NCCL communicators, by key
    std::vector<int64_t> culprits; ///< the ranks the others wait for, by rank
    std::string firstCheck;        ///< the first thing to check, one sentence
};

inline const HangSection* hangSection(const Analysis& a) {
    auto it = a.sections.find(HangSection::kName);
    return it == a.sections.end() ? nullptr : static_cast<const HangSection*>(it->second.get());
}

/// Fills the diagnosis of `s` (collectives, mismatches, chains, culprits, first check) from its
/// ranks; `membersOf(communicator)` lists a communicator's member ranks (world ranks).
void diagnoseHang(HangSection& s,
                  const std::function<std::vector<int64_t>(const std::string&)>& membersOf);

/// Reads each rank's last collective on every NCCL communicator of the trace into `s.nccl`
/// (hang_nccl.cpp); the ranks' unfinished calls must be read already.
Status readNcclStates(sqlite3* db, HangSection& s);

/// Completes `s.nccl` (members, the furthest instance, who never enqueued it) and adds the
/// mismatches of different collectives enqueued as one instance.
void diagnoseNccl(HangSection& s, const std::function<std::vector<int64_t>(const std::string&)>& membersOf);

/// What rank `r` does, in words ("in MPI_Recv from rank 2 on MPI_COMM_WORLD", "computing").
std::string describeRank(const HangRank& r);

} // namespace hpcprof::analyzer
