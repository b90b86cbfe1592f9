// SPDX-License-Identifier: MIT
// Socket communication hooks: send/recv family and connect/accept. Frameworks such as PyTorch's
// gloo backend move collectives over TCP; these calls are class communication (category socket),
// with bytes = the call's result and object = the connection ("socket:tcp 10.0.0.1:40000 ->
// 10.0.0.2:29500"). Plain read/write on a socket are recorded by the I/O hooks and stored as
// socket communication too (the store looks at the object).
#include <sys/socket.h>
#include <sys/types.h>

#include "common/real_function.hpp"
#include "posix_io/io_call.hpp"

using hpcprof::agent::IoResult;
using hpcprof::agent::RealFunction;
using Op = hpcprof::schema::Op;

namespace {

RealFunction<ssize_t (*)(int, const void*, size_t, int)> g_send("send");
RealFunction<ssize_t (*)(int, void*, size_t, int)> g_recv("recv");
RealFunction<ssize_t (*)(int, const void*, size_t, int, const sockaddr*, socklen_t)> g_sendto("sendto");
RealFunction<ssize_t (*)(int, void*, size_t, int, sockaddr*, socklen_t*)> g_recvfrom("recvfrom");
RealFunction<ssize_t (*)(int, const msghdr*, int)> g_sendmsg("sendmsg");
RealFunction<ssize_t (*)(int, msghdr*, int)> g_recvmsg("recvmsg");
RealFunction<int (*)(int, const sockaddr*, socklen_t)> g_connect("connect");
RealFunction<int (*)(int, sockaddr*, socklen_t*)> g_accept("accept");
RealFunction<int (*)(int, sockaddr*, socklen_t*, int)> g_accept4("accept4");

// Times a socket call on descriptor `fd`; `kind` says whether the result is a byte count.
template <typename Call> auto socketCall(Op op, int fd, IoResult kind, Call&& call) {
    if (!hpcprof::agent::recording(hpcprof::agent::SourceBit::Socket)) return call();
    uint64_t t0 = hpcprof::agent::now();
    auto result = call();
    uint64_t t1 = hpcprof::agent::now();
    int err = int64_t(result) < 0 ? errno : 0;
    hpcprof::agent::recordFdCall(op, fd, hpcprof::agent::fdObject(fd), t0, t1,
                                     int64_t(result), kind, err, -1);
    return result;
}

} // namespace

HPCPROF_HOOK ssize_t send(int fd, const void* buf, size_t n, int flags) {
    auto fn = g_send.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return socketCall(Op::SocketSend, fd, IoResult::Bytes, [&] { return fn(fd, buf, n, flags); });
}

HPCPROF_HOOK ssize_t recv(int fd, void* buf, size_t n, int flags) {
    auto fn = g_recv.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return socketCall(Op::SocketRecv, fd, IoResult::Bytes, [&] { return fn(fd, buf, n, flags); });
}

HPCPROF_HOOK ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to,
                            socklen_t len) {
    auto fn = g_sendto.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return socketCall(Op::SocketSendto, fd, IoResult::Bytes,
                      [&] { return fn(fd, buf, n, flags, to, len); });
}

HPCPROF_HOOK ssize_t recvfrom(int fd, void* buf, size_t n, int flags, sockaddr* from,
                              socklen_t* len) {
    auto fn = g_recvfrom.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return socketCall(Op::SocketRecvfrom, fd, IoResult::Bytes,
                      [&] { return fn(fd, buf, n, flags, from, len); });
}

HPCPROF_HOOK ssize_t sendmsg(int fd, const msghdr* msg, int flags) {
    auto fn = g_sendmsg.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return socketCall(Op::SocketSendmsg, fd, IoResult::Bytes, [&] { return fn(fd, msg, flags); });
}

HPCPROF_HOOK ssize_t recvmsg(int fd, msghdr* msg, int flags) {
    auto fn = g_recvmsg.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    return socketCall(Op::SocketRecvmsg, fd, IoResult::Bytes, [&] { return fn(fd, msg, flags); });
}

HPCPROF_HOOK int connect(int fd, const sockaddr* addr, socklen_t len) {
    auto fn = g_connect.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    hpcprof::agent::fdClosed(fd); // the descriptor's name changes with the connection
    return socketCall(Op::SocketConnect, fd, IoResult::Status, [&] { return fn(fd, addr, len); });
}

HPCPROF_HOOK int accept(int fd, sockaddr* addr, socklen_t* len) {
    auto fn = g_accept.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    int r = socketCall(Op::SocketAccept, fd, IoResult::Status, [&] { return fn(fd, addr, len); });
    if (r >= 0) hpcprof::agent::fdClosed(r);
    return r;
}

HPCPROF_HOOK int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
    auto fn = g_accept4.get();
    if (hpcprof::agent::unresolved(fn)) return -1;
    int r = socketCall(Op::SocketAccept4, fd, IoResult::Status,
                       [&] { return fn(fd, addr, len, flags); });
    if (r >= 0) hpcprof::agent::fdClosed(r);
    return r;
}
