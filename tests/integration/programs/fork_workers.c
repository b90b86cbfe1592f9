// SPDX-License-Identifier: MIT
// A parent that forks 3 workers doing unequal work (1, 2, 3 units of busy compute), each
// writing its result to its own pipe; the parent blocks reading the pipes, then waitpid()s each
// worker. Prints, per worker, its pid and its own compute time as measured by itself, and the
// parent's time blocked in the reads and waits:
//   worker <i> pid <pid> compute_ns <ns>
//   parent wait_ns <ns>
// (issue 19: processes that are not ranks are analysed as what they are).
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t nowNs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/// Busy arithmetic for about `ns` nanoseconds; the result keeps the compiler from removing it.
static double spin(int64_t ns) {
    volatile double x = 1.0;
    const int64_t end = nowNs() + ns;
    while (nowNs() < end)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char** argv) {
    const int64_t unitNs = (argc > 1 ? atoll(argv[1]) : 200) * 1000000LL; // ms per unit of work
    enum { kWorkers = 3 };
    int fds[kWorkers][2];
    pid_t pids[kWorkers];
    for (int i = 0; i < kWorkers; ++i) {
        if (pipe(fds[i]) != 0) return 1;
        pids[i] = fork();
        if (pids[i] < 0) return 1;
        if (pids[i] == 0) {
            close(fds[i][0]);
            const int64_t t0 = nowNs();
            double r = spin(unitNs * (i + 1));
            int64_t msg[2] = {nowNs() - t0, (int64_t)r};
            if (write(fds[i][1], msg, sizeof msg) != (ssize_t)sizeof msg) _exit(2);
            close(fds[i][1]);
            _exit(0);
        }
        close(fds[i][1]);
    }
    int64_t waitNs = 0, computeNs[kWorkers];
    for (int i = 0; i < kWorkers; ++i) {
        int64_t msg[2] = {0, 0};
        int64_t t0 = nowNs();
        if (read(fds[i][0], msg, sizeof msg) != (ssize_t)sizeof msg) return 3;
        waitNs += nowNs() - t0;
        computeNs[i] = msg[0];
        close(fds[i][0]);
    }
    for (int i = 0; i < kWorkers; ++i) {
        int status = 0;
        int64_t t0 = nowNs();
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
        waitNs += nowNs() - t0;
    }
    for (int i = 0; i < kWorkers; ++i)
        printf("worker %d pid %ld compute_ns %lld\n", i, (long)pids[i], (long long)computeNs[i]);
    printf("parent wait_ns %lld\n", (long long)waitNs);
    return 0;
}
