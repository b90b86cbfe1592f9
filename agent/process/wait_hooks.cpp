// SPDX-License-Identifier: MIT
// A parent's waits for its children (wait, waitpid, wait3, wait4, waitid): category
// process_wait, class sync, so the time a process spends blocked waiting for the workers it
// forked is waiting, not compute. peer = the child the call reaped (its pid; -1 when none), so
// the analysis can say which worker was waited for. Recorded with the io source: a parent waits
// for its workers through their pipes and through these calls alike.
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>

#include "common/real_function.hpp"
#include "runtime/recorder.hpp"

using hpcprof::agent::RealFunction;
using Op = hpcprof::schema::Op;

namespace {

RealFunction<pid_t (*)(int*)> g_wait("wait");
RealFunction<pid_t (*)(pid_t, int*, int)> g_waitpid("waitpid");
RealFunction<pid_t (*)(int*, int, struct rusage*)> g_wait3("wait3");
RealFunction<pid_t (*)(pid_t, int*, int, struct rusage*)> g_wait4("wait4");
RealFunction<int (*)(idtype_t, id_t, siginfo_t*, int)> g_waitid("waitid");

/// Times `call`; `reaped` turns its result into the child's pid (<= 0: none). errno is left as
/// the real call set it, after a success too, like every other hook.
template <typename Call, typename Reaped> auto waitCall(Op op, Call&& call, Reaped&& reaped) {
    if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) return call();
    const uint64_t t0 = hpcprof::agent::now();
    auto result = call();
    const uint64_t t1 = hpcprof::agent::now();
    const int err = errno; // what the real call left, success or not: the program sees exactly that
    hpcprof::agent::EventFields f{op, t0, t1};
    const int64_t child = reaped(result);
    f.peer = child > 0 ? int32_t(child) : -1;
    if (result < 0) {
        f.flags |= hpcprof::schema::raw::kFlagFailed;
        f.status = err;
    }
    hpcprof::agent::recordEvent(f);
    errno = err; // the recording path (a chunk growing, a string interned) may have changed it
    return result;
}

pid_t pidResult(pid_t r) { return r; }

} // namespace

HPCPROF_HOOK pid_t wait(int* status) {
    auto fn = g_wait.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return waitCall(Op::ProcessWait, [&] { return fn(status); }, pidResult);
}

HPCPROF_HOOK pid_t waitpid(pid_t pid, int* status, int options) {
    auto fn = g_waitpid.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return waitCall(Op::ProcessWaitpid, [&] { return fn(pid, status, options); }, pidResult);
}

HPCPROF_HOOK pid_t wait3(int* status, int options, struct rusage* usage) {
    auto fn = g_wait3.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return waitCall(Op::ProcessWait3, [&] { return fn(status, options, usage); }, pidResult);
}

HPCPROF_HOOK pid_t wait4(pid_t pid, int* status, int options, struct rusage* usage) {
    auto fn = g_wait4.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return waitCall(Op::ProcessWait4, [&] { return fn(pid, status, options, usage); }, pidResult);
}

HPCPROF_HOOK int waitid(idtype_t type, id_t id, siginfo_t* info, int options) {
    auto fn = g_waitid.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return waitCall(Op::ProcessWaitid, [&] { return fn(type, id, info, options); },
                    [&](int r) -> int64_t { return r == 0 && info ? int64_t(info->si_pid) : -1; });
}
