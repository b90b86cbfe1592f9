// SPDX-License-Identifier: MIT
// Ties work launched inside an intercepted call (an NCCL collective) to that call: the hook
// pushes an id before the real call and pops it after; when CUPTI is recording, every CUDA API
// call made in between gets an EXTERNAL_CORRELATION record mapping its correlation id to ours.
// Without CUPTI (not built, not loaded, or failed to start) both calls are a load and a branch.
#pragma once

#include <cstdint>

namespace hpcprof::agent::cupti {

/// Ids handed out for external correlation: (tid << 32) | per-thread counter, never 0.
/// Thread-safe, no syscall after the thread's first call.
uint64_t nextExternalId();

/// Pushes / pops `id` as the calling thread's external correlation id (CUSTOM1 kind).
/// Thread-safe; no-ops unless the CUPTI collector is running.
void pushExternalId(uint64_t id);
void popExternalId();

namespace detail {
using PushFn = void (*)(uint64_t);
using PopFn = void (*)();
/// Installed by the CUPTI collector once it is recording (nullptr otherwise).
void setExternalCorrelationFunctions(PushFn push, PopFn pop);
} // namespace detail

} // namespace hpcprof::agent::cupti
