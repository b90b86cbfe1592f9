/* SPDX-License-Identifier: MIT
 * Workloads with known counter behaviour for the counters tests:
 *   counter_workload spin MS      busy loop for MS ms (task clock ~ wall time when alone)
 *   counter_workload tspin MS     the same after starting a second thread (which only waits)
 *   counter_workload sleep MS     sleep MS ms (task clock ~ 0)
 *   counter_workload switch N     N short sleeps: at least N voluntary context switches
 *   counter_workload io N         N one-byte writes to /dev/null (region boundaries)
 *   counter_workload sde N        N increments of the software-defined event HPCTEST::ops
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef COUNTER_WORKLOAD_SDE
#include <sde_lib.h>
#endif

static double nowMs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void spin(long ms) {
    double t0 = nowMs();
    volatile unsigned long x = 0;
    while (nowMs() - t0 < (double)ms) x++;
}

static void* waitForMain(void* done) {
    while (!__atomic_load_n((int*)done, __ATOMIC_ACQUIRE)) usleep(1000);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: counter_workload spin|tspin|sleep|switch|io|sde N\n");
        return 2;
    }
    long n = atol(argv[2]);
    if (strcmp(argv[1], "spin") == 0) {
        spin(n);
    } else if (strcmp(argv[1], "tspin") == 0) {
        static int done = 0;
        pthread_t t;
        if (pthread_create(&t, NULL, waitForMain, &done) != 0) return 1;
        spin(n);
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
        pthread_join(t, NULL);
    } else if (strcmp(argv[1], "sleep") == 0) {
        usleep((useconds_t)(n * 1000));
    } else if (strcmp(argv[1], "switch") == 0) {
        for (long i = 0; i < n; ++i) usleep(100);
    } else if (strcmp(argv[1], "io") == 0) {
        int fd = open("/dev/null", O_WRONLY);
        for (long i = 0; i < n; ++i)
            if (write(fd, "x", 1) != 1) return 1;
        close(fd);
    } else if (strcmp(argv[1], "sde") == 0) {
#ifdef COUNTER_WORKLOAD_SDE
        static long long ops = 0;
        papi_handle_t h = papi_sde_init("HPCTEST");
        papi_sde_register_counter(h, "ops", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &ops);
        for (long i = 0; i < n; ++i) ops++;
        usleep(50 * 1000); /* let a timer sample see it too */
#else
        fprintf(stderr, "built without libsde\n");
        return 3;
#endif
    } else {
        return 2;
    }
    return 0;
}
