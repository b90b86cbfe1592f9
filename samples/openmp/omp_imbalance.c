// SPDX-License-Identifier: MIT
// An OpenMP program whose threads have known, unequal work, and which measures its own waits.
//
//   omp_imbalance [REGIONS] [UNIT_MS]
//
// Each of REGIONS parallel regions: thread t works (t + 1) * UNIT_MS of wall time, then waits at
// an explicit barrier (timed by the program with omp_get_wtime), then the team runs one
// work-sharing loop of 1000 iterations (static schedule) that ends in its implicit barrier.
// Work is a spin on the wall clock, so it lasts the same however the threads are scheduled.
// Prints one line per thread with its total explicit-barrier wait, then the counts, e.g.
//   thread 0 barrier_wait_us 123456
//   regions 5 threads 2 loops 5 iterations 1000
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void spin(double seconds) {
    double end = now() + seconds;
    while (now() < end) {
    }
}

int main(int argc, char** argv) {
    int regions = argc > 1 ? atoi(argv[1]) : 5;
    double unit = (argc > 2 ? atof(argv[2]) : 10.0) * 1e-3;
    int threads = 0;
    double wait[256] = {0};
    volatile double sink = 0;
    for (int r = 0; r < regions; ++r) {
#pragma omp parallel
        {
            int t = omp_get_thread_num();
#pragma omp single nowait
            threads = omp_get_num_threads();
            spin((t + 1) * unit);
            double t0 = omp_get_wtime();
#pragma omp barrier
            if (t < 256) wait[t] += omp_get_wtime() - t0;
#pragma omp for schedule(static) reduction(+ : sink)
            for (int i = 0; i < 1000; ++i) sink += i * 0.5;
        }
    }
    for (int t = 0; t < threads && t < 256; ++t)
        printf("thread %d barrier_wait_us %.0f\n", t, wait[t] * 1e6);
    printf("regions %d threads %d loops %d iterations 1000\n", regions, threads, regions);
    return sink < 0;
}
