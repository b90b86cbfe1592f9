// SPDX-License-Identifier: MIT
/// Wait states across ranks: wait at N x N on matched collective instances, late sender and late
/// receiver on matched point-to-point messages, and the straggler ranking built from them.
/// Definitions: docs/analysis.md, "Wait states".
///
/// Collective instances are matched by (communicator id, seq); messages by (communicator,
/// sender, receiver, tag) in posting order (MPI's non-overtaking rule), blocking and non-blocking
/// together, while the rank passes run (p2p_matcher.hpp). A non-blocking call waits inside the
/// MPI_Wait* / MPI_Test* that completed it (P2pCall::waitEventId, from the trace's mpi_completion
/// table, read rank by rank); one completing call's wait is counted once, blamed on its latest
/// partner. O(n log n) in the number of calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/status.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "p2p_matcher.hpp"

namespace hpcprof::analyzer {

/// The messages from one rank to another are matched per communicator only when every one of
/// them has one (communicatorId >= 0); otherwise across communicators. This form (a job's calls
/// in lists) is the tests'; the analysis hands each rank's messages to a P2pMatcher.
/// `communicatorSize(id)` gives the member count when known (instances with fewer calls are
/// incomplete and not used); `rankCount` sizes the per-rank table (ranks 0..rankCount-1 plus any
/// other rank seen).
WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks,
                             const std::function<std::optional<int64_t>(int64_t)>& communicatorSize);

/// As above with the messages matched already (P2pMatcher::finish() called).
WaitStates computeWaitStates(const CollectiveCalls& collectives, const P2pMatcher& messages,
                             const std::vector<int64_t>& ranks,
                             const std::function<std::optional<int64_t>(int64_t)>& communicatorSize);

/// The collectives' wait states settled one instance at a time: the calls come in instance
/// order (communicator, seq, rank; CollectiveRuns::sweep gives them so), and an instance is
/// settled when the next one begins, so what is held is one instance's calls, not the job's.
class CollectiveSweep {
public:
    /// Called for every call when its instance is settled, with its wait (0 in an incomplete
    /// instance): what the per-call facts need (bandwidth of large collectives, small calls).
    using MemberFn = std::function<void(const CollectiveCall& call, bool small, int64_t waitNs)>;
    /// `keepEventWaits`: also record each waiting call in WaitStates::waitByEvent (the tests').
    CollectiveSweep(const std::vector<int64_t>& ranks, std::function<std::optional<int64_t>(int64_t)> communicatorSize,
                    MemberFn onMember = {}, bool keepEventWaits = false);
    ~CollectiveSweep();
    CollectiveSweep(const CollectiveSweep&) = delete;
    CollectiveSweep& operator=(const CollectiveSweep&) = delete;

    /// The next call in instance order.
    void add(const CollectiveCall& call, bool small = false);
    /// Settles the last instance and adds the waits of `messages` (matched while the rank passes
    /// ran, P2pMatcher::finish() called): the job's wait states.
    WaitStates finish(const P2pMatcher& messages);
    /// The most calls held at once (one instance's).
    size_t largestInstance() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

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

/// One row of the trace's mpi_completion table with what the analysis needs of the call that
/// posted the request and of the call that completed it.
struct P2pCompletion {
    int64_t waitEventId = 0, request = 0, postEventId = 0;
    bool send = false;
    bool postedByI = false; ///< posted by MPI_I... (one request per call), else by MPI_Start*
    bool synchronous = false; ///< MPI_Issend
    int64_t peer = 0, tag = -1, bytes = -1; ///< tag, bytes: -1 when unknown
    bool hasTag = false, hasBytes = false;
    int64_t waitTs = 0, waitDur = 0, postTs = 0, postDur = 0, communicatorId = -1, rank = 0;
};

/// The completions whose completing call lies on one track, ids [first, last]: a statement for
/// readP2pCompletions (binds 1, 2: the id range, 3: the track id). Invalid when the trace has no
/// mpi_completion table (older traces).
schema::Statement trackCompletionsQuery(const Trace& trace);
/// Appends the rows `query` gives (after its binds) to `out`.
Status readP2pCompletions(schema::Statement& query, std::vector<P2pCompletion>& out);

/// Completes `messages` with `rows` (taken in (completing call, request) order): a message
/// posted by a non-blocking call gets the wait that completed it, its communicator and the
/// actual peer, tag and bytes (a wildcard receive's source is known only at completion);
/// completed posts not in `messages` (wildcard receives, MPI_Start) are appended. Returns the
/// index of the first appended one.
size_t applyP2pCompletions(std::vector<P2pCompletion>& rows, std::vector<P2pCall>& messages);

/// As above with every completion of the trace (posts of rank processes only); a trace without
/// the table leaves `messages` as they are.
Status loadP2pCompletions(const Trace& trace, std::vector<P2pCall>& messages);

} // namespace hpcprof::analyzer
