// SPDX-License-Identifier: MIT
/// Result structs of the CPU-counter analysis (counters.hpp). A value of -1 means "not counted
/// in this trace" (the counter was unavailable or not requested); docs/counters.md defines every
/// number.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hpcprof::analyzer {

/// One rank's counters over the analysis window.
struct RankCounters {
    int64_t rank = 0;
    std::string host;
    int64_t threads = 0;     ///< threads with counter samples
    int64_t busyThreads = 0; ///< threads that wanted a CPU at least half of their time
    int64_t spanNs = 0;      ///< sampled time of the main thread
    double utilization = -1;       ///< main thread: task clock / wall time
    double cpuWaitFraction = -1;   ///< main thread: run-queue wait / wall time
    double voluntaryPerS = -1, involuntaryPerS = -1, contextSwitchesPerS = -1;
    double migrationsPerS = -1, pageFaultsPerS = -1;
    double ipc = -1;                  ///< instructions / cycles (PAPI)
    double cacheMissesPerKInstr = -1; ///< PAPI_L3_TCM or PAPI_L2_TCM per 1000 instructions
    double branchMissesPerKInstr = -1;
    /// Compute phase: the main thread's time outside recorded calls (MPI, I/O, ...).
    int64_t computeNs = 0;
    double computeUtilization = -1, computeWaitFraction = -1, computeIpc = -1;
    /// The main thread's run-queue wait share inside its recorded calls (MPI, I/O, ...): a
    /// call that polls (MPI's shared-memory progress) stays runnable, so on a host with more
    /// busy threads than CPUs most of its time is spent waiting for a core, not transferring.
    double callsWaitFraction = -1;
    /// Main thread's CPU utilisation and run-queue wait share per overview bucket of the window
    /// (same buckets as RankBreakdown::overview); -1 where not sampled.
    std::vector<float> utilizationOverview, waitOverview;
};

/// Demand for CPUs on one host against the CPUs it has.
struct HostCounters {
    std::string host;
    int64_t cpus = 0;        ///< online CPUs (0 = unknown)
    int64_t threads = 0;     ///< sampled threads of the job on the host
    int64_t busyThreads = 0; ///< threads wanting a CPU at least half the time
    int64_t ranks = 0;
    double involuntaryPerS = -1; ///< mean over the ranks' main threads
};

struct CounterAvailability {
    std::string counter, source, reason; ///< source empty when unavailable
    bool available = false;
};

struct CounterAnalysis {
    bool present = false; ///< the trace has counter samples
    std::vector<CounterAvailability> counters;
    std::vector<RankCounters> ranks; ///< by rank
    std::vector<HostCounters> hosts;
};

} // namespace hpcprof::analyzer
