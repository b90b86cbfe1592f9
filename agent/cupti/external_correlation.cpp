// SPDX-License-Identifier: MIT
#include "external_correlation.hpp"

#include <unistd.h>

namespace hpcprof::agent::cupti {

namespace {
detail::PushFn g_push = nullptr;
detail::PopFn g_pop = nullptr;
thread_local uint32_t t_counter = 0;
thread_local uint32_t t_tid = 0;
} // namespace

uint64_t nextExternalId() {
    if (t_tid == 0) t_tid = uint32_t(gettid());
    return (uint64_t(t_tid) << 32) | ++t_counter;
}

void pushExternalId(uint64_t id) {
    if (auto fn = __atomic_load_n(&g_push, __ATOMIC_ACQUIRE)) fn(id);
}

void popExternalId() {
    if (auto fn = __atomic_load_n(&g_pop, __ATOMIC_ACQUIRE)) fn();
}

namespace detail {
void setExternalCorrelationFunctions(PushFn push, PopFn pop) {
    __atomic_store_n(&g_pop, pop, __ATOMIC_RELEASE);
    __atomic_store_n(&g_push, push, __ATOMIC_RELEASE);
}
} // namespace detail

} // namespace hpcprof::agent::cupti
