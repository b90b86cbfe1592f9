// SPDX-License-Identifier: MIT
// Lazily resolved pointers to the real implementations behind our hooks.
//
// Each hook keeps one RealFunction; the pointer is resolved with dlsym(RTLD_NEXT) on first use,
// which also covers hooks that run before the agent's constructor (other libraries'
// constructors). A function that cannot be found is counted once and the hook fails with ENOSYS
// instead of calling exit() inside someone else's program.
#pragma once

#include <dlfcn.h>

#include <cerrno>

#include "runtime/recorder.hpp"

namespace hpcprof::agent {

template <typename Fn> class RealFunction {
public:
    explicit constexpr RealFunction(const char* name) : m_name(name) {}

    /// The real function, or nullptr if it does not exist. Thread-safe: racing resolvers store
    /// the same value.
    Fn get() {
        Fn fn = __atomic_load_n(&m_fn, __ATOMIC_ACQUIRE);
        if (fn) [[likely]] return fn;
        return resolve();
    }

private:
    Fn resolve() {
        Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, m_name));
        if (!fn) {
            if (!__atomic_exchange_n(&m_reported, true, __ATOMIC_ACQ_REL))
                agent::countUnresolvedHook();
            return nullptr;
        }
        __atomic_store_n(&m_fn, fn, __ATOMIC_RELEASE);
        return fn;
    }

    const char* m_name;
    Fn m_fn = nullptr;
    bool m_reported = false;
};

/// True (errno = ENOSYS, what the hook then returns with -1) when the real function `fn` could
/// not be resolved.
template <typename Fn> bool unresolved(Fn fn) {
    if (fn) [[likely]]
        return false;
    errno = ENOSYS;
    return true;
}

} // namespace hpcprof::agent

#define HPCPROF_HOOK extern "C" __attribute__((visibility("default")))
