// SPDX-License-Identifier: MIT
// Communication kernels that carry no collective instance (NCCL's SendRecv kernels of pipeline
// or ring exchanges in a PyTorch profiler trace: no communicator, no sequence number) matched
// across ranks by when they end: the kernels of one exchange finish together on every rank
// taking part (the transfer completes on both sides), so kernels of one name on different ranks
// whose ends lie within a small tolerance are one instance. Order within a step is no guide: a
// sampled trace or a rank-specific kernel shifts it. The instances go through the wait-at-N×N
// analysis like collectives (the rank that starts last is the one the others wait for), so a
// late rank is found even when only some of the job's ranks are in the trace; each step gets its
// straggler, and each rank's step the place where its last long communication kernel starts.
#pragma once

#include <map>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

struct CommKernel {
    int64_t ts = 0, end = 0, nameId = 0, eventId = 0;
};

/// The instances of `byRank`'s kernels (communicator id < -1: synthetic, one per kernel name;
/// seq numbers the instances): kernels of one name on at least two ranks whose ends are within
/// max(50 us, 2 % of the shortest of them) of each other. Kernels matched with no other rank are
/// left out.
std::vector<CollectiveCall> commKernelInstances(const std::map<int64_t, std::vector<CommKernel>>& byRank);

/// Each step's straggler (the rank whose late start cost the others the most wait in it; an
/// instance belongs to the step of its last member's rank that holds its start) and each rank
/// step's commStartFraction.
void annotateStepStragglers(const std::vector<CollectiveCall>& instances,
                            const std::map<int64_t, std::vector<CommKernel>>& byRank, StepStats& steps);

} // namespace hpcprof::analyzer
