// SPDX-License-Identifier: MIT
// The region-boundary hook of the counters source, for the I/O, MPI and NCCL hooks and NVTX
// ranges:
//
//   bool armed = samplesRegion(kCounterBoundaryIo);
//   uint64_t t0 = startAfterEntrySample(armed, now(), now);
//   ... the real call ...
//   uint64_t t1 = now();
//   sampleExitAt(armed, t1);
//
// Without counters the mask is 0 and the cost per call is one load and a not-taken branch.
// Exported by libhpcprof.so (agent/counters/sampler.cpp).
#pragma once

#include <cstdint>

extern "C" {
/// Which boundaries are sampled (kCounterBoundary* bits); 0 when counters are off.
extern __attribute__((visibility("default"))) uint32_t hpcprof_counters_boundaries;
/// Samples the calling thread's counters now (trigger: schema::raw::CounterTrigger). Safe to
/// call from any thread; a call that lands inside another sample of the thread is skipped.
__attribute__((visibility("default"))) void hpcprof_counters_sample(uint32_t trigger);
/// The same for a hook that has just read the time itself (`ticks`, the agent's raw ticks): the
/// once-per-gap check reuses it instead of reading the clock again. Returns 1 if it sampled.
__attribute__((visibility("default"))) int hpcprof_counters_sample_at(uint32_t trigger, uint64_t ticks);
/// The program is about to start a thread (pthread_create hook): a sampler thread deferred
/// while the program was single-threaded starts now.
__attribute__((visibility("default"))) void hpcprof_counters_thread_starting();
}

namespace hpcprof::agent::counters {
/// True on the counter sampler thread once it has a descriptor table of its own: the descriptor
/// numbers its calls use (PAPI's, through hooked libc calls) are not the program's.
extern constinit thread_local bool t_ownDescriptorTable __attribute__((tls_model("initial-exec")));

constexpr uint32_t kCounterBoundaryMpi = 1u << 0;
constexpr uint32_t kCounterBoundaryIo = 1u << 1;
constexpr uint32_t kCounterBoundaryNccl = 1u << 2;
constexpr uint32_t kCounterBoundaryNvtx = 1u << 3;
constexpr uint32_t kCounterEnter = 2; ///< schema::raw::CounterTrigger::Enter
constexpr uint32_t kCounterExit = 3;  ///< schema::raw::CounterTrigger::Exit

/// True when boundaries of `region` (kCounterBoundary*) are sampled: one load.
inline bool samplesRegion(uint32_t region) {
    return (__atomic_load_n(&hpcprof_counters_boundaries, __ATOMIC_RELAXED) & region) != 0;
}

/// Samples the calling thread at a boundary of `region` if asked for: one load and a not-taken
/// branch when not. For regions whose two ends are separate calls (NVTX push and pop).
inline void sampleBoundary(uint32_t region, uint32_t trigger) {
    if (samplesRegion(region)) [[unlikely]]
        hpcprof_counters_sample(trigger);
}

/// The entry boundary of a call that starts at `t` (the hook's own clock reading, which the
/// once-per-gap check reuses instead of reading the clock again): samples if `armed` and a
/// sample is due. Returns the start to record: `t`, or `now()` after a sample, so that the
/// call's time excludes the sampling.
template <typename Now> inline uint64_t startAfterEntrySample(bool armed, uint64_t t, Now&& now) {
    if (armed && hpcprof_counters_sample_at(kCounterEnter, t)) [[unlikely]]
        return now();
    return t;
}

/// The exit boundary of that call, at its end time `t1`.
inline void sampleExitAt(bool armed, uint64_t t1) {
    if (armed) [[unlikely]]
        hpcprof_counters_sample_at(kCounterExit, t1);
}
} // namespace hpcprof::agent::counters
