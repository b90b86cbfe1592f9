// SPDX-License-Identifier: MIT
// The counters sampler: a registry of the process's threads, a sampler thread that discovers
// threads through /proc/self/task and samples them on a timer, region-boundary samples taken by
// the threads themselves, and the last samples at exit. Records go through the recorder
// (raw_format.hpp, counter section).
//
// Descriptors: the program's descriptor table never holds one of ours between two of our calls.
// The sampler thread takes a descriptor table of its own (unshare(CLONE_FILES)) and keeps every
// per-thread descriptor there (perf_event groups, /proc/<tid>/ files, PAPI's); the program's
// threads read for themselves only what needs no descriptor (getrusage, their CPU clock), and a
// /proc file only while the process has a single thread (opened and closed within the call).
// Where unshare is refused (some container seccomp profiles) the sampler holds nothing: it reads
// the CPU clocks of the threads it knows, and the trace says so ("timer_samples").
//
// Cost: the sampler thread runs in the idle scheduling class (it never takes a CPU a program
// thread wants), skips threads that did not run since its last tick, and no counter of the
// default lists attaches a perf_event to a thread (that costs the thread at every context
// switch). See docs/counters.md for the measurements.
//
//   HPCPROF_COUNTERS            counter list: default | software | none | names ("A|B" = A or B)
//   HPCPROF_COUNTER_PERIOD_MS   timer period (default 10; 0 = boundaries, start and exit only)
//   HPCPROF_COUNTER_BOUNDARIES  regions sampled at entry and exit: mpi,io,nccl,nvtx,all
//                               (default mpi,nccl: NVTX ranges can be too fine to sample)
//   HPCPROF_COUNTER_THREAD      deferred (default) | eager: when the timer thread starts
//   HPCPROF_COUNTER_MIN_GAP_US  least time between two boundary samples of a thread (1000)
//   HPCPROF_COUNTER_SHARED_TABLE=1  (tests) behave as if unshare were refused
//
// Locking: one mutex guards the registry on the sampler thread (discovery, ticks, the last
// samples); no program thread ever waits for it. A thread's boundary sample touches no shared
// state but its own record buffer. exit() waits at most 0.5 s for the sampler's last samples.
// Forked children (without exec) are not counted.
#pragma once

#include <cstdint>

#include "counter_plan.hpp"

namespace hpcprof::agent::counters {

struct SamplerOptions {
    const char* list = "default";
    uint64_t periodNs = 10'000'000;
    /// false: periodNs is the default, which a host with more ranks than CPUs stretches so that
    /// the samplers of all ranks wake each CPU no more often than one rank's would.
    bool periodGiven = false;
    /// Boundary samples of a thread at least this far apart (HPCPROF_COUNTER_MIN_GAP_US): a
    /// software sample costs 5-10 us, so 1 ms bounds boundary sampling to about 1 % of a thread.
    uint64_t minGapNs = 1'000'000;
    bool minGapGiven = false; ///< false: stretched like the period on an oversubscribed host
    /// kCounterBoundary* bits: MPI and NCCL calls (I/O calls and NVTX ranges can be too frequent)
    uint32_t boundaries = 1u | 4u;
    /// true: a single-threaded program gets the sampler thread only when it starts a thread of
    /// its own (HPCPROF_COUNTER_THREAD=eager starts it at once).
    bool deferThread = true;
    /// Tests: the sampler behaves as if it could not take a descriptor table of its own.
    bool sharedTable = false;
    /// Ranks of this job on this host, from the launcher (0 = not known). With more ranks than
    /// CPUs the default list's hardware counters are not opened (see counter_plan.hpp).
    int localRanks = 0;
};

/// Reads the HPCPROF_COUNTER* environment variables (through settings.def's rules) and the
/// ranks per host (localRanksFromEnvironment).
SamplerOptions optionsFromEnvironment();
/// The launcher's ranks-per-host variable (OMPI_COMM_WORLD_LOCAL_SIZE, PMIX_LOCAL_SIZE,
/// MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE, LOCAL_WORLD_SIZE; the first that is one positive
/// number), 0 when none is. `getenvFn` is injectable for tests.
int localRanksFromEnvironment(const char* (*getenvFn)(const char*) = nullptr);
/// Why the default list's hardware counters are not opened on this host (written into
/// `reason`), or false when they are: more ranks of the job than online CPUs.
bool refusesGroupHardwareCounters(int localRanks, int onlineCpus, char* reason);
/// On a host with more ranks of the job than online CPUs, multiplies the default timer period and
/// the default least gap between boundary samples by ceil(ranks / CPUs), so that all ranks
/// together sample each CPU no more often than one rank does on a host that fits; values given
/// in the environment are kept.
void stretchForOversubscription(SamplerOptions& options, int onlineCpus);
/// Parses "mpi,io" into kCounterBoundary* bits.
uint32_t parseBoundaries(const char* list);

/// Probes the backends, writes the counter definitions and starts sampling. Once per process.
void startSampler(const SamplerOptions& options);

/// Where the minimum gap between two boundary samples of a thread is kept, in raw ticks (0 while
/// not known yet; read it with a relaxed atomic load): the MPI module checks it inline before
/// calling hpcprof_counters_sample_at() (runtime/agent_abi.hpp, hpcprof_agent_hot).
const uint64_t* boundaryGapTicksAddress();
/// Last sample of every thread (by the sampler thread, or what needs no descriptor when it does
/// not answer), then stops (atexit).
void stopSampler();
/// The plan in force (for tests and benchmarks).
const CounterPlan& currentPlan();

} // namespace hpcprof::agent::counters
