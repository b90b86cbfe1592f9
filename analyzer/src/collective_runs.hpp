// SPDX-License-Identifier: MIT
// Internal: every rank's collective calls, out of memory while the rank passes run (issue 22,
// bounded analysis memory). A collective instance is complete only once every member rank's
// pass has ended, so holding the calls until then held all of them (64 bytes a call, the
// largest thing that grew with the events). Instead each rank's calls are written, as its pass
// ends, as one run sorted by instance (communicator, seq) to an unlinked temporary file; the
// cross-rank sweep then reads the runs side by side (a merge by instance with a small buffer per
// rank), so the wait states hold one instance at a time, and the steps of the collective pattern
// read one rank's run at a time. A run is stored compactly, each call against the one before
// (12 bytes a call on the generated MPI job; 64 in memory). Where no temporary file can be made
// (TMPDIR unwritable) or it stops growing (disk full), the runs stay in memory, same results, up
// to a limit (1 GiB: some 90 M calls); past it the analysis stops with an error that names
// TMPDIR. A 1 B-event MPI job has 235 M collective calls: growing in memory until the kernel
// killed the process said nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer::detail {

/// One call of a run: the call (its rank set), where it was in the rank's scan order, and
/// whether it is counted among the rank's small calls (RankFacts::smallCommCalls).
struct RunCall {
    CollectiveCall call;
    uint32_t position = 0;
    bool small = false;
};

class CollectiveRuns {
public:
    /// What memory holds at most when the temporary file failed.
    static constexpr size_t kMemoryLimitBytes = size_t(1) << 30;

    /// `inMemory`: never use a temporary file (the tests compare both), and no limit.
    /// `memoryLimitBytes`: what memory may hold after the temporary file failed.
    explicit CollectiveRuns(bool inMemory = false, size_t memoryLimitBytes = kMemoryLimitBytes);
    ~CollectiveRuns();
    CollectiveRuns(CollectiveRuns&&) noexcept;
    CollectiveRuns& operator=(CollectiveRuns&&) noexcept;

    /// One rank's calls in its scan order, each with its small mark (`small` is as long as
    /// `calls`, or empty: none small). Each rank once, ranks in any order.
    Status addRank(int64_t rank, const std::vector<CollectiveCall>& calls, const std::vector<bool>& small);

    /// The ranks with calls, ascending.
    std::vector<int64_t> ranks() const;
    /// The calls of all runs.
    size_t size() const;
    /// The bytes they take (a few of them a call: see collective_runs.cpp).
    size_t bytes() const;
    /// True when the runs are in a temporary file (else in memory).
    bool spilled() const;

    /// The calls of `rank`, sorted by (communicator, seq), in scan order among equals.
    Status readRank(int64_t rank, std::vector<RunCall>& out) const;

    /// Every call of every run and of `extra` (calls of any ranks, e.g. the communication kernels
    /// matched across ranks), in instance order: by (communicator, seq, rank), a run's calls
    /// before `extra`'s, then in scan order (`extra`'s in its order): the order of one sort of
    /// all calls listed rank by rank with `extra` after them. Holds a small buffer per run.
    Status sweep(const std::vector<CollectiveCall>& extra,
                 const std::function<void(const CollectiveCall&, bool small)>& each) const;

    struct Run;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace hpcprof::analyzer::detail
