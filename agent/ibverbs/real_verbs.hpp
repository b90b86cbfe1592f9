// SPDX-License-Identifier: MIT
// The real libibverbs functions behind the hooks, looked up with dlvsym(RTLD_NEXT, name,
// "IBVERBS_1.1") on first use: libibverbs exports each verb twice (@IBVERBS_1.0 for binaries of
// 2006, @@IBVERBS_1.1 for everything since), and the 1.1 ABI is the one the headers describe.
#pragma once

#include <dlfcn.h>

#include "runtime/recorder.hpp"

namespace hpcprof::agent::ibverbs {

template <typename Fn> class RealVerb {
public:
    constexpr RealVerb(const char* name, const char* version = "IBVERBS_1.1")
        : m_name(name), m_version(version) {}

    /// The real function, or nullptr (counted once). Thread-safe: racing resolvers store the
    /// same value.
    Fn get() {
        Fn fn = __atomic_load_n(&m_fn, __ATOMIC_ACQUIRE);
        if (fn) [[likely]] return fn;
        void* p = dlvsym(RTLD_NEXT, m_name, m_version);
        if (!p) p = dlsym(RTLD_NEXT, m_name); // a library without symbol versions
        if (!p) {
            if (!__atomic_exchange_n(&m_reported, true, __ATOMIC_ACQ_REL))
                agent::countUnresolvedHook();
            return nullptr;
        }
        fn = reinterpret_cast<Fn>(p);
        __atomic_store_n(&m_fn, fn, __ATOMIC_RELEASE);
        return fn;
    }

private:
    const char* m_name;
    const char* m_version;
    Fn m_fn = nullptr;
    bool m_reported = false;
};

} // namespace hpcprof::agent::ibverbs
