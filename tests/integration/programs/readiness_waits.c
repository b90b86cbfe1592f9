// SPDX-License-Identifier: MIT
// Waits for descriptors the way event loops and Python's multiprocessing queues do, and prints
// what it measured: a worker writes to a pipe after kDelayMs; the parent first checks the pipe
// 1000 times with a zero timeout (checks, not waits: never recorded), then waits for it in poll
// (woken by the pipe), then select()s on an empty pipe until a 50 ms timeout, epoll_wait()s on
// it for 30 ms, and finally calls poll with an invalid descriptor count, printing its errno (the
// program must see exactly the errno the real call set).
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t nowNs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char** argv) {
    const int delayMs = argc > 1 ? atoi(argv[1]) : 200;
    int data[2], empty[2];
    if (pipe(data) != 0 || pipe(empty) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
        struct timespec d = {delayMs / 1000, (long)(delayMs % 1000) * 1000000L};
        nanosleep(&d, NULL);
        if (write(data[1], "x", 1) != 1) _exit(1);
        _exit(0);
    }
    struct pollfd p = {data[0], POLLIN, 0};
    int checks = 0;
    for (int i = 0; i < 1000; ++i) checks += poll(&p, 1, 0) == 0;

    int64_t t0 = nowNs();
    int ready = poll(&p, 1, -1);
    int64_t pollNs = nowNs() - t0;
    char c;
    if (ready != 1 || read(data[0], &c, 1) != 1) return 2;

    fd_set set;
    FD_ZERO(&set);
    FD_SET(empty[0], &set);
    struct timeval tv = {0, 50000};
    t0 = nowNs();
    int selected = select(empty[0] + 1, &set, NULL, NULL, &tv);
    int64_t selectNs = nowNs() - t0;

    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = empty[0]};
    epoll_ctl(ep, EPOLL_CTL_ADD, empty[0], &ev);
    struct epoll_event out;
    t0 = nowNs();
    int got = epoll_wait(ep, &out, 1, 30);
    int64_t epollNs = nowNs() - t0;

    errno = 0;
    volatile nfds_t tooMany = (nfds_t)-1; // more than RLIMIT_NOFILE: EINVAL
    int bad = poll(&p, tooMany, 10);
    int badErrno = errno;

    int status = 0;
    waitpid(child, &status, 0);
    printf("checks %d poll %d %lld select %d %lld epoll %d %lld bad %d errno %d\n", checks, ready,
           (long long)pollNs, selected, (long long)selectNs, got, (long long)epollNs, bad, badErrno);
    return 0;
}
