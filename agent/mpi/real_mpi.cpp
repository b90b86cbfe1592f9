// SPDX-License-Identifier: MIT
#include "real_mpi.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

namespace hpcprof::agent::mpi {

namespace {

struct Search {
    const char* name;
    void* self;
    void* found;
};

int searchObject(dl_phdr_info* info, size_t, void* data) {
    auto* s = static_cast<Search*>(data);
    if (!info->dlpi_name || !*info->dlpi_name) return 0;
    void* h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    void* sym = dlsym(h, s->name);
    dlclose(h);
    if (!sym) return 0;
    Dl_info where{};
    // Skip our own wrappers (this module defines the PMPI_ names too).
    if (dladdr(sym, &where) && where.dli_fbase == s->self) return 0;
    s->found = sym;
    return 1;
}

} // namespace

void* findRealMpiFunction(const char* name) {
    if (void* p = dlsym(RTLD_NEXT, name)) return p;
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&findRealMpiFunction), &self);
    Search s{name, self.dli_fbase, nullptr};
    dl_iterate_phdr(searchObject, &s);
    return s.found;
}

} // namespace hpcprof::agent::mpi
