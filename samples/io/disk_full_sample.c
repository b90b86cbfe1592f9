// SPDX-License-Identifier: MIT
// A program that fills its disk while it runs, then frees it: the main thread and THREADS
// workers each make CALLS 1-byte pwrite calls to their own file in DIR (different offsets, so
// each is a full raw record); the workers wait while the main thread writes DIR/filler.dat until
// the filesystem is full (ENOSPC); then all make 3 * CALLS more (a profiler's raw files must
// grow past what it had secured before the disk filled), and the main thread removes the
// filler. Every descriptor is opened before the fill, so between the two rounds a worker makes
// pwrite calls and nothing else. Prints the same lines with and without a profiler; exits 0 when
// every call did what it should.
//
//   disk_full_sample DIR THREADS CALLS [nofill]
//
// With `nofill` the disk is left as the caller prepared it (full or not) and nothing is removed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long g_calls;
static pthread_barrier_t g_filled;

struct Worker {
    pthread_t thread;
    int fd;
    long failed;
};

static long writeCalls(int fd, long calls) {
    long failed = 0;
    char byte = 'x';
    for (long i = 0; i < calls; ++i)
        if (pwrite(fd, &byte, 1, i % 4096) != 1) ++failed; // the worker's file has its 4 KiB
    return failed;
}

static void* work(void* arg) {
    struct Worker* w = arg;
    w->failed = writeCalls(w->fd, g_calls);
    pthread_barrier_wait(&g_filled); // the main thread fills the disk meanwhile
    pthread_barrier_wait(&g_filled);
    w->failed += writeCalls(w->fd, 3 * g_calls);
    return NULL;
}

// Writes `path` until the filesystem is full. Returns 0 when it ended with ENOSPC.
static int fill(const char* path) {
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    static char block[65536];
    size_t size = sizeof(block);
    for (;;) {
        ssize_t n = write(fd, block, size);
        if (n > 0) continue;
        if (n < 0 && errno != ENOSPC) break;
        if (size == 1) { // not even one byte fits: full
            close(fd);
            return 0;
        }
        size /= 2;
    }
    close(fd);
    return 1;
}

int main(int argc, char** argv) {
    if (argc < 4) return 2;
    const char* dir = argv[1];
    int threads = atoi(argv[2]);
    g_calls = atol(argv[3]);
    int doFill = !(argc > 4 && strcmp(argv[4], "nofill") == 0);
    if (threads < 1 || threads > 64 || g_calls < 1) return 2;
    struct Worker workers[65]; // the last one is the main thread's
    char path[4200];
    for (int i = 0; i <= threads; ++i) {
        // Each worker's file gets its 4 KiB now, so that its pwrite calls need no new blocks.
        snprintf(path, sizeof(path), "%s/worker-%d.dat", dir, i);
        workers[i].fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
        if (workers[i].fd < 0 || pwrite(workers[i].fd, "", 1, 4095) != 1) return 1;
    }
    pthread_barrier_init(&g_filled, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; ++i)
        if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) return 1;
    struct Worker* self = &workers[threads];
    self->failed = writeCalls(self->fd, g_calls);
    pthread_barrier_wait(&g_filled);
    snprintf(path, sizeof(path), "%s/filler.dat", dir);
    int fillFailed = doFill ? fill(path) : 0;
    pthread_barrier_wait(&g_filled);
    self->failed += writeCalls(self->fd, 3 * g_calls);
    long failed = self->failed;
    close(self->fd);
    for (int i = 0; i < threads; ++i) {
        pthread_join(workers[i].thread, NULL);
        failed += workers[i].failed;
        close(workers[i].fd);
    }
    if (doFill) unlink(path);
    printf("workers %d, calls %ld each, failed %ld\n", threads, 4 * g_calls, failed);
    printf("disk filled: %s\n", !doFill ? "not asked" : fillFailed ? "no" : "yes");
    return failed == 0 && fillFailed == 0 ? 0 : 1;
}
