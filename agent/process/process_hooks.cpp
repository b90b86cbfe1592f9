// SPDX-License-Identifier: MIT
// Process lifecycle hooks: how a process ends (exit, _exit, exec) is written into its header so
// the store can tell a clean end from a kill, and exec'ed programs keep the agent even when the
// caller passes an environment without it (the agent's variables are put back).
//
// fork needs no hook: the recorder's pthread_atfork child handler gives the child its own files.
#include <spawn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "common/real_function.hpp"
#include "runtime/recorder.hpp"

using hpcprof::agent::RealFunction;
namespace raw = hpcprof::schema::raw;

extern "C" char** environ;

namespace {

RealFunction<void (*)(int)> g_exit("exit"), g_quickExit("_exit"), g_quickExit2("_Exit");
RealFunction<int (*)(const char*, char* const[], char* const[])> g_execve("execve");
RealFunction<int (*)(const char*, char* const[], char* const[])> g_execvpe("execvpe");
RealFunction<int (*)(int, char* const[], char* const[])> g_fexecve("fexecve");
RealFunction<int (*)(pid_t*, const char*, const posix_spawn_file_actions_t*,
                     const posix_spawnattr_t*, char* const[], char* const[])>
    g_posixSpawn("posix_spawn"), g_posixSpawnp("posix_spawnp");

// The agent's own variables ("LD_PRELOAD=...", "HPCPROF_*=..."), copied at start so a program
// that edits its environment cannot take them away from its children.
constexpr int kMaxCarried = 32;
char g_carriedText[16384];
const char* g_carried[kMaxCarried];
int g_carriedCount = 0;

__attribute__((constructor)) void captureAgentEnvironment() {
    size_t used = 0;
    for (char** e = environ; e && *e && g_carriedCount < kMaxCarried; ++e) {
        if (std::strncmp(*e, "HPCPROF_", 8) != 0 && std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
            continue;
        size_t len = std::strlen(*e) + 1;
        if (used + len > sizeof(g_carriedText)) break;
        std::memcpy(g_carriedText + used, *e, len);
        g_carried[g_carriedCount++] = g_carriedText + used;
        used += len;
    }
}

bool hasVariable(char* const envp[], const char* assignment) {
    size_t nameLen = std::strchr(assignment, '=') - assignment + 1;
    for (char* const* e = envp; e && *e; ++e)
        if (std::strncmp(*e, assignment, nameLen) == 0) return true;
    return false;
}

// Runs `call(envp')` where envp' is `envp` plus any agent variable it lacks. The array lives on
// the stack: exec must not allocate (it may follow vfork).
template <typename Call> int withAgentEnvironment(char* const envp[], Call&& call) {
    int n = 0;
    while (envp && envp[n]) ++n;
    int missingCount = 0;
    for (int i = 0; i < g_carriedCount; ++i)
        if (!hasVariable(envp, g_carried[i])) ++missingCount;
    if (missingCount == 0) return call(envp);
    char** merged = static_cast<char**>(__builtin_alloca(sizeof(char*) * (n + missingCount + 1)));
    int m = 0;
    for (int i = 0; i < n; ++i) merged[m++] = envp[i];
    for (int i = 0; i < g_carriedCount; ++i)
        if (!hasVariable(envp, g_carried[i])) merged[m++] = const_cast<char*>(g_carried[i]);
    merged[m] = nullptr;
    return call(merged);
}

// Marks the exec; if the exec fails the process goes on, so the mark is taken back.
template <typename Call> int markedExec(Call&& call) {
    hpcprof::agent::markEnd(raw::EndState::Exec, -1);
    int r = call();
    int err = errno;
    hpcprof::agent::markEnd(raw::EndState::Running, -1);
    errno = err;
    return r;
}

int execWithPath(const char* file, char* const argv[], char* const envp[], bool searchPath) {
    auto fn = searchPath ? g_execvpe.get() : g_execve.get();
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return markedExec([&] {
        return withAgentEnvironment(envp, [&](char* const* e) { return fn(file, argv, e); });
    });
}

// execl-style argument lists, collected on the stack.
constexpr int kMaxListArgs = 4096;

} // namespace

HPCPROF_HOOK void exit(int code) {
    hpcprof::agent::markEnd(raw::EndState::Exited, code);
    if (auto fn = g_exit.get()) fn(code);
    __builtin_trap();
}

HPCPROF_HOOK void _exit(int code) {
    hpcprof::agent::markEnd(raw::EndState::QuickExit, code);
    if (auto fn = g_quickExit.get()) fn(code);
    __builtin_trap();
}

HPCPROF_HOOK void _Exit(int code) {
    hpcprof::agent::markEnd(raw::EndState::QuickExit, code);
    if (auto fn = g_quickExit2.get()) fn(code);
    __builtin_trap();
}

HPCPROF_HOOK int execve(const char* path, char* const argv[], char* const envp[]) {
    return execWithPath(path, argv, envp, false);
}

HPCPROF_HOOK int execv(const char* path, char* const argv[]) {
    return execWithPath(path, argv, environ, false);
}

HPCPROF_HOOK int execvp(const char* file, char* const argv[]) {
    return execWithPath(file, argv, environ, true);
}

HPCPROF_HOOK int execvpe(const char* file, char* const argv[], char* const envp[]) {
    return execWithPath(file, argv, envp, true);
}

HPCPROF_HOOK int fexecve(int fd, char* const argv[], char* const envp[]) {
    auto fn = g_fexecve.get();
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return markedExec([&] {
        return withAgentEnvironment(envp, [&](char* const* e) { return fn(fd, argv, e); });
    });
}

namespace {
/// The argument list of execl / execlp / execle: `first`, then `ap` up to its NULL (left just
/// past it, where execle's environment follows).
void collectListArgs(char* (&argv)[kMaxListArgs], const char* first, va_list& ap) {
    int n = 0;
    argv[n++] = const_cast<char*>(first);
    while (argv[n - 1] && n < kMaxListArgs) argv[n++] = va_arg(ap, char*);
    argv[kMaxListArgs - 1] = nullptr;
}
} // namespace

HPCPROF_HOOK int execl(const char* path, const char* arg, ...) {
    char* argv[kMaxListArgs];
    va_list ap;
    va_start(ap, arg);
    collectListArgs(argv, arg, ap);
    va_end(ap);
    return execWithPath(path, argv, environ, false);
}

HPCPROF_HOOK int execlp(const char* file, const char* arg, ...) {
    char* argv[kMaxListArgs];
    va_list ap;
    va_start(ap, arg);
    collectListArgs(argv, arg, ap);
    va_end(ap);
    return execWithPath(file, argv, environ, true);
}

HPCPROF_HOOK int execle(const char* path, const char* arg, ...) {
    char* argv[kMaxListArgs];
    va_list ap;
    va_start(ap, arg);
    collectListArgs(argv, arg, ap);
    char* const* envp = va_arg(ap, char* const*);
    va_end(ap);
    return execWithPath(path, argv, envp, false);
}

HPCPROF_HOOK int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* fa,
                             const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
    auto fn = g_posixSpawn.get();
    if (!fn) return ENOSYS;
    return withAgentEnvironment(envp,
                                [&](char* const* e) { return fn(pid, path, fa, attr, argv, e); });
}

HPCPROF_HOOK int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* fa,
                              const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
    auto fn = g_posixSpawnp.get();
    if (!fn) return ENOSYS;
    return withAgentEnvironment(envp,
                                [&](char* const* e) { return fn(pid, file, fa, attr, argv, e); });
}
