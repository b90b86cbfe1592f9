// SPDX-License-Identifier: MIT
// Agent overhead benchmark: a tight loop of 1-byte pwrite calls to /dev/null. Prints the mean
// wall time and the calling thread's CPU time per call in ns (the CPU time is what the hooks cost
// this thread, unaffected by other programs taking the CPU away). Run it with and without the
// agent (bench/agent/overhead.sh). A second argument names a file that receives the realtime
// clock (ns) at the loop's end, for the time `hpcprof run` takes after the program exits
// (bench/agent/after_exit.sh).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
    long calls = argc > 1 ? atol(argv[1]) : 2000000;
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return 1;
    char byte = 'x';
    for (long i = 0; i < 10000; ++i) (void)!pwrite(fd, &byte, 1, 0); // warm up (lazy binding)
    struct timespec a, b, ca, cb;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ca);
    for (long i = 0; i < calls; ++i)
        if (pwrite(fd, &byte, 1, 0) != 1) return 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cb);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    double cpu = (cb.tv_sec - ca.tv_sec) * 1e9 + (cb.tv_nsec - ca.tv_nsec);
    printf("%.2f %.2f\n", ns / calls, cpu / calls);
    close(fd);
    if (argc > 2) {
        FILE* stamp = fopen(argv[2], "w");
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if (stamp) fprintf(stamp, "%lld%09ld\n", (long long)now.tv_sec, now.tv_nsec);
        if (stamp) fclose(stamp);
    }
    return 0;
}
