// SPDX-License-Identifier: MIT
// Runs of identical calls with a signal handler recording in the middle of them: main makes CALLS
// write() calls of 10 bytes to DIR/repeat.dat, then CALLS read() calls of 10 bytes of it back,
// then CALLS pairs of lseek() to the start and read() of 10 bytes (a loop of two alternating
// calls), while an interval timer (every 100 us) raises SIGALRM, whose handler writes 64 bytes to
// DIR/signal.dat. The handler often lands while the agent is recording main's call. Prints
// "signal writes N" (the handler's writes, all of 64 bytes).
//
//   repeat_sample DIR CALLS
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int g_signalFd = -1;
static volatile sig_atomic_t g_signalWrites = 0;

static void onAlarm(int sig) {
    (void)sig;
    static const char buf[64] = {0};
    if (write(g_signalFd, buf, sizeof(buf)) == sizeof(buf)) g_signalWrites++;
}

static void setTimer(long usec) {
    struct itimerval it = {{0, usec}, {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    long calls = atol(argv[2]);
    char path[4200];
    snprintf(path, sizeof(path), "%s/signal.dat", argv[1]);
    g_signalFd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    snprintf(path, sizeof(path), "%s/repeat.dat", argv[1]);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0 || g_signalFd < 0) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = onAlarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    setTimer(100);
    char buf[10] = "012345678";
    for (long i = 0; i < calls; ++i)
        if (write(fd, buf, sizeof(buf)) != sizeof(buf)) return 1;
    if (lseek(fd, 0, SEEK_SET) != 0) return 1;
    for (long i = 0; i < calls; ++i)
        if (read(fd, buf, sizeof(buf)) != sizeof(buf)) return 1;
    for (long i = 0; i < calls; ++i)
        if (lseek(fd, 0, SEEK_SET) != 0 || read(fd, buf, sizeof(buf)) != sizeof(buf)) return 1;
    setTimer(0);
    close(fd);
    close(g_signalFd);
    printf("signal writes %d\n", (int)g_signalWrites);
    return 0;
}
