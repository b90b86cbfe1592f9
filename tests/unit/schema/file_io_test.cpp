// SPDX-License-Identifier: MIT
// Whole transfers (file_io.hpp) through short and interrupted system calls: a pipe moves at
// most its capacity per call, and a signal without SA_RESTART interrupts a blocked call (EINTR)
// or cuts it short.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hpcprof/schema/file_io.hpp"

using namespace hpcprof::schema;

namespace {

std::atomic<int> g_alarms{0};
void onAlarm(int) { g_alarms.fetch_add(1, std::memory_order_relaxed); }

/// SIGALRM every `us` microseconds, without SA_RESTART, while alive.
struct Alarms {
    explicit Alarms(long us) {
        struct sigaction sa{};
        sa.sa_handler = onAlarm;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, &m_old);
        const itimerval every{{0, us}, {0, us}};
        setitimer(ITIMER_REAL, &every, nullptr);
    }
    ~Alarms() {
        const itimerval off{};
        setitimer(ITIMER_REAL, &off, nullptr);
        sigaction(SIGALRM, &m_old, nullptr);
    }
    struct sigaction m_old{};
};

std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 2654435761u >> 13);
    return v;
}

} // namespace

TEST_CASE("whole writes and reads through a pipe cut short and interrupted by signals", "[schema][file_io]") {
    const std::vector<uint8_t> sent = pattern(size_t(16) << 20); // 256 pipe-fulls
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::vector<uint8_t> got(sent.size() + 4096);
    size_t read = 0;
    int readErrno = -1;
    g_alarms = 0;
    struct sigaction ignore{}, oldPipe{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &oldPipe);
    {
        Alarms alarms(100);
        std::thread reader([&] {
            read = fileio::readFull(fds[0], got.data(), got.size()); // asks for more than comes
            readErrno = errno;
            close(fds[0]); // a reader that stopped early fails the writer (EPIPE), never blocks it
        });
        const size_t written = fileio::writeFull(fds[1], sent.data(), sent.size());
        CHECK(written == sent.size());
        close(fds[1]);
        reader.join();
    }
    sigaction(SIGPIPE, &oldPipe, nullptr);
    INFO(g_alarms.load() << " signals");
    CHECK(g_alarms.load() > 0); // the transfers were interrupted
    CHECK(read == sent.size()); // short of what it asked: the end of the pipe
    CHECK(readErrno == 0);
    got.resize(read);
    CHECK(got == sent);
}

TEST_CASE("whole positional transfers: the end of a file, and a refusal with its errno", "[schema][file_io]") {
    char path[] = "/tmp/hpcprof-file-io-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const std::vector<uint8_t> data = pattern(10000);
    CHECK(fileio::pwriteAll(fd, data.data(), data.size(), 5000));
    std::vector<uint8_t> back(8000, 0xee);
    errno = EBADF;
    CHECK(fileio::preadFull(fd, back.data(), back.size(), 9000) == 6000); // 15000 bytes in the file
    CHECK(errno == 0);
    CHECK(std::equal(back.begin(), back.begin() + 6000, data.begin() + 4000));
    CHECK(fileio::preadAll(fd, back.data(), 100, 0));
    CHECK(back[0] == 0); // the hole before offset 5000
    const int readOnly = open(path, O_RDONLY);
    REQUIRE(readOnly >= 0);
    CHECK(fileio::pwriteFull(readOnly, data.data(), 10, 0) == 0);
    CHECK(errno == EBADF);
    CHECK_FALSE(fileio::writeAll(readOnly, data.data(), 10));
    close(readOnly);
    close(fd);
    unlink(path);
}
