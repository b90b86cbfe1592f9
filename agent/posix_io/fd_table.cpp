// SPDX-License-Identifier: MIT
#include "fd_table.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>

#include <cstdio>
#include <cstring>

#include "counters/boundary.hpp"
#include "runtime/recorder.hpp"
#include "runtime/syscalls.hpp"

namespace hpcprof::agent {

namespace {
// Descriptors above this are recorded without an object (very rare; counted as unknown).
constexpr int kMaxFds = 1 << 16;
uint32_t g_objects[kMaxFds]; // atomic access only; 0 = not known yet

char* appendFdPath(char* out, int fd) {
    static constexpr char kPrefix[] = "/proc/self/fd/";
    std::memcpy(out, kPrefix, sizeof(kPrefix) - 1);
    out += sizeof(kPrefix) - 1;
    char digits[12];
    int n = 0;
    do {
        digits[n++] = char('0' + fd % 10);
        fd /= 10;
    } while (fd);
    while (n) *out++ = digits[--n];
    *out = 0;
    return out;
}

// "tcp 10.0.0.1:40000->10.0.0.2:29500", "udp ...", "unix /path": what a socket connects.
// Returns the length written, 0 if the socket is not of a kind named here.
size_t describeSocket(int fd, char* out, size_t cap) {
    sockaddr_storage local{}, peer{};
    socklen_t localLen = sizeof(local), peerLen = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLen) != 0) return 0;
    bool connected = getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLen) == 0;
    int type = 0;
    socklen_t typeLen = sizeof(type);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLen);
    auto endpoint = [](const sockaddr_storage& a, char* buf, size_t n) {
        char host[INET6_ADDRSTRLEN] = "?";
        int port = 0;
        if (a.ss_family == AF_INET) {
            const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
            inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
            port = ntohs(in->sin_port);
        } else if (a.ss_family == AF_INET6) {
            const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
            inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
            port = ntohs(in->sin6_port);
        }
        std::snprintf(buf, n, "%s:%d", host, port);
    };
    int n = 0;
    if (local.ss_family == AF_INET || local.ss_family == AF_INET6) {
        char a[64], b[64] = "";
        endpoint(local, a, sizeof(a));
        if (connected) endpoint(peer, b, sizeof(b));
        n = std::snprintf(out, cap, "socket:%s %s->%s", type == SOCK_DGRAM ? "udp" : "tcp", a,
                          connected ? b : "*");
    } else if (local.ss_family == AF_UNIX) {
        const auto* un = reinterpret_cast<const sockaddr_un*>(connected ? &peer : &local);
        n = std::snprintf(out, cap, "socket:unix %s", un->sun_path[0] ? un->sun_path : "(unnamed)");
    }
    return n > 0 ? size_t(n) : 0;
}

// What the kernel says the descriptor is: a path, "pipe:[ino]", a socket's endpoints, ...
uint32_t internFromProc(int fd) {
    char link[40];
    appendFdPath(link, fd);
    char target[4096];
    ssize_t n = agent::sys::readlink(link, target, sizeof(target));
    if (n <= 0) return 0;
    if (n > 8 && std::memcmp(target, "socket:[", 8) == 0)
        if (size_t m = describeSocket(fd, target, sizeof(target))) n = ssize_t(m);
    return agent::internString(target, size_t(n));
}
} // namespace

uint32_t fdObject(int fd) {
    if (fd < 0 || fd >= kMaxFds) return 0;
    uint32_t id = __atomic_load_n(&g_objects[fd], __ATOMIC_RELAXED);
    if (id) [[likely]] return id;
    int savedErrno = errno; // the caller's errno must survive this first-use readlink
    id = internFromProc(fd);
    if (id) __atomic_store_n(&g_objects[fd], id, __ATOMIC_RELAXED);
    errno = savedErrno;
    return id;
}

uint32_t fdOpened(int fd, const char* path, int dirfd) {
    if (fd < 0 || fd >= kMaxFds || counters::t_ownDescriptorTable) return 0;
    uint32_t id = 0;
    // Absolute paths are kept as the program wrote them; relative ones are resolved by the
    // kernel so the trace names the file users know.
    if (path && path[0] == '/' && dirfd == AT_FDCWD)
        id = agent::internString(path, std::strlen(path));
    else {
        int savedErrno = errno;
        id = internFromProc(fd);
        errno = savedErrno;
    }
    __atomic_store_n(&g_objects[fd], id, __ATOMIC_RELAXED);
    return id;
}

void fdDuplicated(int oldFd, int newFd) {
    if (newFd < 0 || newFd >= kMaxFds || counters::t_ownDescriptorTable) return;
    uint32_t id = (oldFd >= 0 && oldFd < kMaxFds) ? __atomic_load_n(&g_objects[oldFd], __ATOMIC_RELAXED) : 0;
    __atomic_store_n(&g_objects[newFd], id, __ATOMIC_RELAXED);
}

void fdClosed(int fd) {
    if (fd >= 0 && fd < kMaxFds && !counters::t_ownDescriptorTable) __atomic_store_n(&g_objects[fd], 0u, __ATOMIC_RELAXED);
}

} // namespace hpcprof::agent
