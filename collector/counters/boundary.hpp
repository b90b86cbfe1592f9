// SPDX-License-Identifier: MIT
// The region-boundary hook of the counters source, for the I/O, MPI and NCCL hooks and NVTX
// ranges:
//
//   bool sampled = sampleEntry(kCounterBoundaryMpi);
//   ... the real call ...
//   sampleExit(sampled);
//
// Without counters the mask is 0 and the cost per call is one load and a not-taken branch.
// Exported by libhpcprof.so (collector/counters/sampler.cpp).
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

namespace hpcprof::collector::counters {
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

/// Samples at a call's entry if `region` is sampled; true when it did, so that sampleExit()
/// closes the pair even if sampling is switched off meanwhile (at exit).
inline bool sampleEntry(uint32_t region) {
    if (!samplesRegion(region)) [[likely]]
        return false;
    hpcprof_counters_sample(kCounterEnter);
    return true;
}
inline void sampleExit(bool entered) {
    if (entered) [[unlikely]]
        hpcprof_counters_sample(kCounterExit);
}
} // namespace hpcprof::collector::counters
