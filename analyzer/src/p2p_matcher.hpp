// SPDX-License-Identifier: MIT
// Point-to-point wait states (late sender, late receiver; docs/analysis.md "Wait states") computed
// while the rank passes run, so that the messages need not all be held until the ranks are
// combined. Each rank hands over its messages when its pass ends (addRank, ranks in any order);
// the messages from S to R (S's sends to R and R's receives from S) are matched as soon as both
// S and R have handed theirs over, and then dropped. What is held is the messages whose partner
// rank has not finished yet and the completing calls (MPI_Wait*) some of whose requests are not
// matched yet: for the usual patterns (halo and ring exchanges, ranks analysed in rank order)
// about the messages of the ranks in flight, not of the job.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

namespace detail {
struct WaitTables;
/// `calls` (of one direction) in the order they are matched in: by (communicator when
/// `byCommunicator`, tag), then time; of equal ones the first first, as a stable sort gives.
void sortForMatching(std::vector<P2pCall>& calls, bool byCommunicator);
} // namespace detail

class P2pMatcher {
public:
    /// `keepEventWaits`: also record each waiting call's wait in WaitStates::waitByEvent (one
    /// entry per call that waited; the unit tests read it, the analysis does not).
    explicit P2pMatcher(bool keepEventWaits = false);
    ~P2pMatcher();
    P2pMatcher(P2pMatcher&&) noexcept;
    P2pMatcher& operator=(P2pMatcher&&) noexcept;

    /// All of one rank's messages (every P2pCall::rank is `rank`), in the rank's order (of two
    /// messages posted at once, the first is matched first). Each rank once.
    void addRank(int64_t rank, std::vector<P2pCall> messages);
    /// Matches what is left (messages whose partner never finished are unmatched) and settles
    /// the waits of every completing call.
    void finish();

    /// The messages held because their partner rank has not finished (what memory grows with).
    size_t pendingMessages() const;

    /// After finish(): the sums, to merge into the job's tables.
    const detail::WaitTables& tables() const;
    /// After finish(): per rank, the waits of its calls counted as small (P2pCall::small,
    /// waitSmall).
    const std::map<int64_t, int64_t>& smallCallWaitNs() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace hpcprof::analyzer
