// SPDX-License-Identifier: MIT
// TEST-ONLY: how Python loads a framework. The executable dlopens libnccl_local_user.so with
// RTLD_LOCAL; that library links libnccl.so.2, which therefore stays out of the global scope
// where the agent's hooks look with RTLD_NEXT. The library runs a 1-rank communicator with one
// all-reduce; exit 0 when every NCCL call succeeded and the result is right.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "nccl_local: %s\n", dlerror());
        return 3;
    }
    auto run = reinterpret_cast<int (*)()>(dlsym(lib, "nccl_local_run"));
    return run ? run() : 4;
}
