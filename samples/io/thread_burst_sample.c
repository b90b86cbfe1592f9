// SPDX-License-Identifier: MIT
// Many short threads, the way a thread pool or an OpenMP team comes and goes: THREADS threads,
// WAVE at a time (default 1: one after another), each making CALLS 1-byte pwrite calls to
// DIR/burst.dat (opened once by the main thread) and exiting. Prints "threads N, calls M each".
//
//   thread_burst_sample DIR THREADS CALLS [WAVE]
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int g_fd;
static long g_calls;

static void* work(void* arg) {
    (void)arg;
    char byte = 'x';
    for (long i = 0; i < g_calls; ++i)
        if (pwrite(g_fd, &byte, 1, i) != 1) return (void*)1;
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) return 2;
    char path[4200];
    snprintf(path, sizeof(path), "%s/burst.dat", argv[1]);
    int threads = atoi(argv[2]);
    g_calls = atol(argv[3]);
    int wave = argc == 5 ? atoi(argv[4]) : 1;
    g_fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (g_fd < 0 || threads < 1 || wave < 1 || wave > 256) return 1;
    for (int started = 0; started < threads;) {
        pthread_t th[256];
        int n = 0;
        for (; n < wave && started < threads; ++n, ++started)
            if (pthread_create(&th[n], NULL, work, NULL) != 0) return 1;
        for (int i = 0; i < n; ++i) {
            void* failed;
            pthread_join(th[i], &failed);
            if (failed) return 1;
        }
    }
    close(g_fd);
    printf("threads %d, calls %ld each\n", threads, g_calls);
    return 0;
}
