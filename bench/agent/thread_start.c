// SPDX-License-Identifier: MIT
// Thread start benchmark: starts THREADS short threads one after another (create, run, join),
// each making CALLS 1-byte pwrite calls to /dev/null, the way a thread pool or an OpenMP team
// comes and goes. Prints, in us: the median time from pthread_create to the end of
// pthread_join (a thread's whole life), the median time from pthread_create to the thread's
// first instruction (its start), the median time of each thread's first call (where the
// agent sets the thread's raw file up), the median of its later calls, the median time from the
// end of a thread's work to the end of its pthread_join (its exit, where the agent lets the file
// go), and the total wall time in ms. Run it with and without the agent
// (bench/agent/thread_start.sh).
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int g_fd;
static long g_calls;

struct ThreadTimes {
    double firstCallNs;
    double laterCallNs; // mean of the calls after the first, 0 if none
    double entered;     // CLOCK_MONOTONIC ns when the thread began to run
    double workEnd;     // CLOCK_MONOTONIC ns when the thread's work ended
};

static double nowNs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void* work(void* arg) {
    struct ThreadTimes* out = arg;
    char byte = 'x';
    double a = nowNs();
    out->entered = a;
    if (g_calls > 0 && pwrite(g_fd, &byte, 1, 0) != 1) abort();
    double b = nowNs();
    for (long i = 1; i < g_calls; ++i)
        if (pwrite(g_fd, &byte, 1, 0) != 1) abort();
    double c = nowNs();
    out->firstCallNs = b - a;
    out->laterCallNs = g_calls > 1 ? (c - b) / (double)(g_calls - 1) : 0;
    out->workEnd = nowNs();
    return NULL;
}

static int byValue(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* v, long n) {
    qsort(v, (size_t)n, sizeof(double), byValue);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
    long threads = argc > 1 ? atol(argv[1]) : 500;
    g_calls = argc > 2 ? atol(argv[2]) : 1;
    if (threads < 1) return 2;
    g_fd = open("/dev/null", O_WRONLY);
    if (g_fd < 0) return 1;
    double* life = calloc((size_t)threads, sizeof(double));
    double* first = calloc((size_t)threads, sizeof(double));
    double* later = calloc((size_t)threads, sizeof(double));
    double* exits = calloc((size_t)threads, sizeof(double));
    double* starts = calloc((size_t)threads, sizeof(double));
    struct ThreadTimes t;
    double start = nowNs();
    for (long i = 0; i < threads; ++i) {
        pthread_t th;
        double a = nowNs();
        if (pthread_create(&th, NULL, work, &t) != 0) return 1;
        pthread_join(th, NULL);
        double joined = nowNs();
        life[i] = joined - a;
        exits[i] = joined - t.workEnd;
        starts[i] = t.entered - a;
        first[i] = t.firstCallNs;
        later[i] = t.laterCallNs;
    }
    double total = nowNs() - start;
    printf("%.2f %.2f %.2f %.3f %.2f %.2f\n", median(life, threads) / 1e3,
           median(starts, threads) / 1e3, median(first, threads) / 1e3,
           median(later, threads) / 1e3, median(exits, threads) / 1e3, total / 1e6);
    return 0;
}
