// SPDX-License-Identifier: MIT
/// Wait states across ranks: wait at N x N on matched collective instances, late sender and late
/// receiver on matched point-to-point messages, and the straggler ranking built from them.
/// Definitions: docs/analysis.md, "Wait states".
///
/// Collective instances are matched by (communicator id, seq); messages by (sender, receiver,
/// tag) in order (MPI's non-overtaking rule). O(n log n) in the number of calls.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

/// `communicatorSize(id)` gives the member count when known (instances with fewer calls are
/// incomplete and not used); `rankCount` sizes the per-rank table (ranks 0..rankCount-1 plus any
/// other rank seen).
WaitStates computeWaitStates(std::vector<CollectiveCall> collectives, std::vector<P2pCall> messages,
                             const std::vector<int64_t>& ranks,
                             const std::function<std::optional<int64_t>(int64_t)>& communicatorSize);

} // namespace hpcprof::analyzer
