// SPDX-License-Identifier: MIT
/// Wait states across ranks: wait at N x N on matched collective instances, late sender and late
/// receiver on matched point-to-point messages, and the straggler ranking built from them.
/// Definitions: docs/analysis.md, "Wait states".
///
/// Collective instances are matched by (communicator id, seq); messages by (communicator,
/// sender, receiver, tag) in posting order (MPI's non-overtaking rule), blocking and non-blocking
/// together. A non-blocking call waits inside the MPI_Wait* / MPI_Test* that completed it
/// (P2pCall::waitEventId, from the trace's mpi_completion table via loadP2pCompletions); one
/// completing call's wait is counted once, blamed on its latest partner. O(n log n) in the
/// number of calls.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer {

/// Messages are matched per communicator only when every message has one (communicatorId >= 0);
/// otherwise across communicators.
/// `communicatorSize(id)` gives the member count when known (instances with fewer calls are
/// incomplete and not used); `rankCount` sizes the per-rank table (ranks 0..rankCount-1 plus any
/// other rank seen).
WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks,
                             const std::function<std::optional<int64_t>(int64_t)>& communicatorSize);

/// The point-to-point calls of a job without a merged copy of them: each rank's list as its scan
/// left it (in rank order), then the posts that only the completions name (a deque: their
/// addresses stay put while it grows). Visited in that order, as one list would be.
struct MessageLists {
    std::vector<std::vector<P2pCall>> ranks;
    std::deque<P2pCall> added;

    template <class F>
    void forEach(F&& f) {
        for (auto& list : ranks)
            for (P2pCall& m : list) f(m);
        for (P2pCall& m : added) f(m);
    }
    template <class F>
    void forEach(F&& f) const {
        for (const auto& list : ranks)
            for (const P2pCall& m : list) f(m);
        for (const P2pCall& m : added) f(m);
    }
};

/// As above, without copies: `collectives` are read in place (their order is kept) and the
/// messages are matched where they lie.
WaitStates computeWaitStates(const CollectiveCalls& collectives, const MessageLists& messages,
                             const std::vector<int64_t>& ranks,
                             const std::function<std::optional<int64_t>(int64_t)>& communicatorSize);

/// Collective calls ordered by instance (communicator, seq), then rank.
void sortByInstance(std::vector<CollectiveCall>& collectives);
/// One past the last call of the instance that starts at `i` (calls sorted by instance).
size_t instanceEnd(const std::vector<CollectiveCall>& collectives, size_t i);
/// A member's wait for the last member to enter (its call ends first: it waited to its end).
int64_t memberWait(const CollectiveCall& c, int64_t lastEntry);
/// The instance [i, j): the member that entered last (its index) and the others' total wait.
struct InstanceBlame {
    size_t last = 0;
    int64_t waitNs = 0;
};
InstanceBlame blameOf(const std::vector<CollectiveCall>& collectives, size_t i, size_t j);

/// The communicator id messages on communicators the agent did not see created are given (their
/// keys differ on every rank): they are matched by sender, receiver and tag across all of them.
inline constexpr int64_t kUnknownCommunicatorId = INT64_MAX;

/// Standard sends at least this large are taken to use the rendezvous protocol (above the eager
/// limit of every common MPI transport), so their wait completes only once the receive is posted.
inline constexpr int64_t kRendezvousBytes = 64 * 1024;

/// Completes `messages` with the trace's non-blocking request completions (mpi_completion):
/// a message posted by a non-blocking call gets the wait that completed it, its communicator and
/// the actual peer, tag and bytes (a wildcard receive's source is known only at completion);
/// completed posts not in `messages` (wildcard receives, MPI_Start) are added. Traces without
/// the table are left as they are. Only posts of rank processes are used.
Status loadP2pCompletions(const Trace& trace, std::vector<P2pCall>& messages);
/// As above; the posts not in `messages.ranks` go to `messages.added`.
Status loadP2pCompletions(const Trace& trace, MessageLists& messages);

} // namespace hpcprof::analyzer
