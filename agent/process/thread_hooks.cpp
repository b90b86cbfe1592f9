// SPDX-License-Identifier: MIT
// pthread_create: the one moment a single-threaded program stops being single-threaded. The
// counters sampler defers its timer thread until then (see agent/counters/sampler.cpp);
// nothing is recorded here.
#include <pthread.h>

#include <cerrno>

#include "common/real_function.hpp"
#include "counters/boundary.hpp"

using hpcprof::agent::RealFunction;

namespace {
RealFunction<int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*)>
    g_pthreadCreate("pthread_create");
} // namespace

HPCPROF_HOOK int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                void* (*start)(void*), void* arg) {
    auto real = g_pthreadCreate.get();
    if (!real) return EAGAIN;
    hpcprof_counters_thread_starting();
    return real(thread, attr, start, arg);
}
