// SPDX-License-Identifier: MIT
// The real MPI implementation behind our wrappers: PMPI_ entry points found with
// dlsym(RTLD_NEXT), or, when libmpi was loaded privately after us (dlopen without RTLD_GLOBAL),
// by looking through every loaded object for one that defines it.
#pragma once

namespace hpcprof::agent::mpi {

/// Address of the real `PMPI_...` function named `name`, or nullptr.
void* findRealMpiFunction(const char* name);

/// A lazily resolved real PMPI function (thread-safe; racing resolvers store the same value).
template <typename Fn> class RealMpi {
public:
    explicit constexpr RealMpi(const char* name) : m_name(name) {}
    Fn get() {
        Fn fn = __atomic_load_n(&m_fn, __ATOMIC_ACQUIRE);
        if (fn) [[likely]] return fn;
        fn = reinterpret_cast<Fn>(findRealMpiFunction(m_name));
        if (fn) __atomic_store_n(&m_fn, fn, __ATOMIC_RELEASE);
        return fn;
    }

private:
    const char* m_name;
    Fn m_fn = nullptr;
};

} // namespace hpcprof::agent::mpi
