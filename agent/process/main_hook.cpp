// SPDX-License-Identifier: MIT
// A program that returns from main() exits through libc's internal call to exit(), which no
// preloaded hook sees. Wrapping main through __libc_start_main lets the agent write the status
// main returned into the process header, so process.exit_code is known for every clean exit,
// not only for explicit exit() calls.
#include "common/real_function.hpp"
#include "runtime/recorder.hpp"

using hpcprof::agent::RealFunction;
namespace raw = hpcprof::schema::raw;

namespace {

using MainFn = int (*)(int, char**, char**);
using StartMainFn = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);

RealFunction<StartMainFn> g_startMain("__libc_start_main");
MainFn g_main = nullptr;

int mainReturningStatus(int argc, char** argv, char** envp) {
    int status = g_main(argc, argv, envp);
    // What the parent will see: the low 8 bits. atexit handlers still run and record after this.
    hpcprof::agent::markEnd(raw::EndState::Exited, status & 0xff);
    return status;
}

} // namespace

HPCPROF_HOOK int __libc_start_main(MainFn main, int argc, char** argv, void (*init)(),
                                   void (*fini)(), void (*rtldFini)(), void* stackEnd) {
    StartMainFn real = g_startMain.get();
    if (!real) __builtin_trap(); // no libc to start the program with: nothing sane to do
    g_main = main;
    return real(mainReturningStatus, argc, argv, init, fini, rtldFini, stackEnd);
}
