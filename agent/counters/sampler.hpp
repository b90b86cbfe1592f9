// SPDX-License-Identifier: MIT
// The counters sampler: a registry of the process's threads (each with its backends' per-thread
// resources), a sampler thread that discovers threads through /proc/self/task and samples them
// on a timer, region-boundary samples taken by the threads themselves, and the last sample at
// exit. Records go through the recorder (raw_format.hpp, counter section).
//
//   HPCPROF_COUNTERS            counter list: default | software | none | names ("A|B" = A or B)
//   HPCPROF_COUNTER_PERIOD_MS   timer period (default 10; 0 = boundaries and exit only)
//   HPCPROF_COUNTER_BOUNDARIES  regions sampled at entry and exit: mpi,io,nccl,nvtx,all
//                               (default mpi,nccl: NVTX ranges can be too fine to sample)
//   HPCPROF_COUNTER_THREAD      deferred (default) | eager: when the timer thread starts
//   HPCPROF_COUNTER_MIN_GAP_US  least time between two boundary samples of a thread (1000)
//
// Locking: one mutex guards the registry (thread discovery, timer samples, exit); a thread's own
// boundary sample takes no lock once the thread is registered (ThreadSlot::busy keeps the
// sampler off that slot meanwhile). Forked children (without exec) are not counted.
#pragma once

#include <cstdint>

#include "counter_plan.hpp"

namespace hpcprof::agent::counters {

struct SamplerOptions {
    const char* list = "default";
    uint64_t periodNs = 10'000'000;
    /// Boundary samples of a thread at least this far apart (HPCPROF_COUNTER_MIN_GAP_US): a
    /// software sample costs 5-10 us, so 1 ms bounds boundary sampling to about 1 % of a thread.
    uint64_t minGapNs = 1'000'000;
    /// kCounterBoundary* bits: MPI and NCCL calls (I/O calls and NVTX ranges can be too frequent)
    uint32_t boundaries = 1u | 4u;
    bool startThread = true; ///< false: tests drive sampleAll() themselves
    /// true: a single-threaded program gets the sampler thread only when it starts a thread of
    /// its own (HPCPROF_COUNTER_THREAD=eager starts it at once).
    bool deferThread = true;
};

/// Reads the HPCPROF_COUNTER* environment variables.
SamplerOptions optionsFromEnvironment();
/// Parses "mpi,io" into kCounterBoundary* bits.
uint32_t parseBoundaries(const char* list);

/// Probes the backends, writes the counter definitions and starts sampling. Once per process.
void startSampler(const SamplerOptions& options);
/// Timer sample of every registered thread that ran since its last one (and process-wide
/// counters); with `discover`, first registers threads that appeared in /proc/self/task.
void sampleAll(bool discover = true);
/// Last sample of every thread, then stops (atexit).
void stopSampler();
/// The plan in force (for tests and benchmarks).
const CounterPlan& currentPlan();

} // namespace hpcprof::agent::counters
