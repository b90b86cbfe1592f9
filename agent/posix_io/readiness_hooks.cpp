// SPDX-License-Identifier: MIT
// Waits for a descriptor to become ready: poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
// epoll_pwait2 (and the _FORTIFY_SOURCE forms of poll/ppoll). A process blocked here is waiting
// (for a worker's pipe, a peer's socket, an event loop), not computing: Python's multiprocessing
// queues (PyTorch's data-loader queue among them) wait for data in poll() before they read it.
//
// Only waits are recorded: a call with a zero timeout is a readiness check, made in tight
// progress loops (MPI and event libraries), and is left alone. A recorded call's object is the
// descriptor that woke it (the first ready one); after a timeout or EINTR, poll's first
// descriptor (select's sets are empty then: no object); for epoll it is the epoll descriptor
// itself (its events carry user data, not descriptors). bytes = how many descriptors were ready. Category fd_wait, class sync.
//
// Every hook: noexcept, no allocation, no lock; errno and the return value are exactly the real
// call's. Thread-safe and async-signal-safe.
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <type_traits>

#include "common/real_function.hpp"
#include "io_call.hpp"

using hpcprof::agent::RealFunction;
using Op = hpcprof::schema::Op;

extern "C" {
int __poll_chk(struct pollfd*, nfds_t, int, size_t);
int __ppoll_chk(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*, size_t);
}

namespace {

RealFunction<int (*)(pollfd*, nfds_t, int)> g_poll("poll");
RealFunction<int (*)(pollfd*, nfds_t, int, size_t)> g_pollChk("__poll_chk");
RealFunction<int (*)(pollfd*, nfds_t, const timespec*, const sigset_t*)> g_ppoll("ppoll");
RealFunction<int (*)(pollfd*, nfds_t, const timespec*, const sigset_t*, size_t)> g_ppollChk("__ppoll_chk");
RealFunction<int (*)(int, fd_set*, fd_set*, fd_set*, timeval*)> g_select("select");
RealFunction<int (*)(int, fd_set*, fd_set*, fd_set*, const timespec*, const sigset_t*)> g_pselect("pselect");
RealFunction<int (*)(int, epoll_event*, int, int)> g_epollWait("epoll_wait");
RealFunction<int (*)(int, epoll_event*, int, int, const sigset_t*)> g_epollPwait("epoll_pwait");
RealFunction<int (*)(int, epoll_event*, int, const timespec*, const sigset_t*)> g_epollPwait2("epoll_pwait2");

bool blocks(int timeoutMs) { return timeoutMs != 0; }
bool blocks(const timespec* t) { return !t || t->tv_sec != 0 || t->tv_nsec != 0; }
bool blocks(const timeval* t) { return !t || t->tv_sec != 0 || t->tv_usec != 0; }

/// The descriptor a poll set names: the first ready one, else the first one it waited on. The
/// set is read only when the kernel accepted it (a result, or EINTR): after EFAULT or EINVAL it
/// may not be memory the program owns.
int pollDescriptor(const pollfd* fds, nfds_t n, int result, int err) {
    if (!fds || (result < 0 && err != EINTR)) return -1;
    if (result > 0)
        for (nfds_t i = 0; i < n; ++i)
            if (fds[i].fd >= 0 && fds[i].revents) return fds[i].fd;
    for (nfds_t i = 0; i < n; ++i)
        if (fds[i].fd >= 0) return fds[i].fd;
    return -1;
}

/// The lowest ready descriptor of a select() that returned `result` > 0 (the kernel rewrote the
/// sets to the ready ones); none after a timeout or a failure (the sets are then empty or
/// unchecked, and are never read before the call: they may not be valid memory).
int selectDescriptor(int nfds, const fd_set* r, const fd_set* w, const fd_set* x, int result) {
    if (result <= 0) return -1;
    for (int fd = 0; fd < nfds && fd < FD_SETSIZE; ++fd)
        if ((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) || (x && FD_ISSET(fd, x))) return fd;
    return -1;
}

/// Times a wait when it may block; `descriptor(result, errno)` names the descriptor it is
/// recorded on.
/// `waited()`, when given, decides after the call whether it could block.
template <typename Call, typename Descriptor, typename Waited = bool (*)()>
int readinessWait(Op op, bool mayBlock, Call&& call, Descriptor&& descriptor, Waited waited = nullptr) {
    if (!mayBlock || !hpcprof::agent::recording(hpcprof::agent::SourceBit::Io)) return call();
    const uint64_t t0 = hpcprof::agent::now();
    const int result = call();
    const uint64_t t1 = hpcprof::agent::now();
    const int err = errno; // what the real call left, success or not: the program sees exactly that
    if constexpr (!std::is_same_v<Waited, bool (*)()>) {
        if (!waited()) return result;
    }
    const int fd = descriptor(result, err);
    hpcprof::agent::recordFdCall(op, fd, fd >= 0 ? hpcprof::agent::fdObject(fd) : 0, t0, t1, result,
                                 hpcprof::agent::IoResult::Bytes, err, -1);
    errno = err; // resolving the descriptor's name (readlink) may have changed it
    return result;
}

} // namespace

HPCPROF_HOOK int poll(pollfd* fds, nfds_t n, int timeout) {
    auto fn = g_poll.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdPoll, blocks(timeout), [&] { return fn(fds, n, timeout); },
                         [&](int r, int e) { return pollDescriptor(fds, n, r, e); });
}

HPCPROF_HOOK int __poll_chk(pollfd* fds, nfds_t n, int timeout, size_t fdslen) {
    auto fn = g_pollChk.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdPollChk, blocks(timeout), [&] { return fn(fds, n, timeout, fdslen); },
                         [&](int r, int e) { return pollDescriptor(fds, n, r, e); });
}

HPCPROF_HOOK int ppoll(pollfd* fds, nfds_t n, const timespec* timeout, const sigset_t* mask) {
    auto fn = g_ppoll.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdPpoll, blocks(timeout), [&] { return fn(fds, n, timeout, mask); },
                         [&](int r, int e) { return pollDescriptor(fds, n, r, e); });
}

HPCPROF_HOOK int __ppoll_chk(pollfd* fds, nfds_t n, const timespec* timeout, const sigset_t* mask,
                             size_t fdslen) {
    auto fn = g_ppollChk.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdPpollChk, blocks(timeout),
                         [&] { return fn(fds, n, timeout, mask, fdslen); },
                         [&](int r, int e) { return pollDescriptor(fds, n, r, e); });
}

HPCPROF_HOOK int select(int nfds, fd_set* r, fd_set* w, fd_set* x, timeval* timeout) {
    auto fn = g_select.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdSelect, blocks(timeout), [&] { return fn(nfds, r, w, x, timeout); },
                         [&](int res, int) { return selectDescriptor(nfds, r, w, x, res); });
}

HPCPROF_HOOK int pselect(int nfds, fd_set* r, fd_set* w, fd_set* x, const timespec* timeout,
                         const sigset_t* mask) {
    auto fn = g_pselect.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdPselect, blocks(timeout), [&] { return fn(nfds, r, w, x, timeout, mask); },
                         [&](int res, int) { return selectDescriptor(nfds, r, w, x, res); });
}

HPCPROF_HOOK int epoll_wait(int epfd, epoll_event* events, int max, int timeout) {
    auto fn = g_epollWait.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdEpollWait, blocks(timeout), [&] { return fn(epfd, events, max, timeout); },
                         [&](int, int) { return epfd; });
}

HPCPROF_HOOK int epoll_pwait(int epfd, epoll_event* events, int max, int timeout, const sigset_t* mask) {
    auto fn = g_epollPwait.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return readinessWait(Op::FdEpollPwait, blocks(timeout),
                         [&] { return fn(epfd, events, max, timeout, mask); }, [&](int, int) { return epfd; });
}

HPCPROF_HOOK int epoll_pwait2(int epfd, epoll_event* events, int max, const timespec* timeout,
                              const sigset_t* mask) {
    auto fn = g_epollPwait2.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    // glibc hands this timeout to the kernel unread, so a bad pointer is the kernel's EFAULT, never
    // a fault of ours: it is read only after a call that did not fail with EFAULT.
    bool faulted = false;
    const int r = readinessWait(Op::FdEpollPwait2, true, [&] {
        const int result = fn(epfd, events, max, timeout, mask);
        faulted = result < 0 && errno == EFAULT;
        return result;
    }, [&](int, int) { return epfd; }, [&] { return !faulted && blocks(timeout); });
    return r;
}
