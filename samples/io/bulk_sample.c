// SPDX-License-Identifier: MIT
// Many small calls, enough to fill several chunks of every thread's raw file: the main thread,
// THREADS worker threads (default 2, started four at a time so that threads come and go while
// others record) and a forked child each make CALLS 1-byte pwrite calls (to DIR/bulk-main.dat,
// DIR/bulk-thread.dat and DIR/bulk-child.dat). The parent then reaps its children with plain
// wait() until ECHILD and prints how many it reaped ("reaped 1"): the agent's own helper task
// must never show up there. With a last argument "kill" the program SIGKILLs itself at the end.
//
//   bulk_sample DIR CALLS [THREADS] [kill]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* g_dir;
static long g_calls;

static int writeMany(const char* name) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd < 0) return 1;
    char byte = 'x';
    for (long i = 0; i < g_calls; ++i)
        if (pwrite(fd, &byte, 1, i % 4096) != 1) return 1;
    close(fd);
    return 0;
}

static void* worker(void* arg) {
    (void)arg;
    return (void*)(long)writeMany("bulk-thread.dat");
}

// Runs `count` workers, at most four at a time. Returns non-zero if any failed.
static int runWorkers(int count) {
    int failed = 0;
    for (int started = 0; started < count;) {
        pthread_t wave[4];
        int n = 0;
        for (; n < 4 && started < count; ++n, ++started)
            if (pthread_create(&wave[n], NULL, worker, NULL) != 0) return 1;
        for (int i = 0; i < n; ++i) {
            void* r;
            pthread_join(wave[i], &r);
            failed |= (int)(long)r;
        }
    }
    return failed;
}

static void* workerWaves(void* arg) {
    return (void*)(long)runWorkers((int)(long)arg);
}

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    g_dir = argv[1];
    g_calls = atol(argv[2]);
    int killAtEnd = strcmp(argv[argc - 1], "kill") == 0;
    int threads = argc > 3 && !(argc == 4 && killAtEnd) ? atoi(argv[3]) : 2;
    pthread_t waves;
    if (pthread_create(&waves, NULL, workerWaves, (void*)(long)threads) != 0) return 1;
    pid_t child = fork();
    if (child == 0) _exit(writeMany("bulk-child.dat"));
    int failed = writeMany("bulk-main.dat");
    void* r;
    pthread_join(waves, &r);
    failed |= (int)(long)r;
    int reaped = 0, status;
    while (wait(&status) > 0) {
        ++reaped;
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    if (errno != ECHILD) failed = 1;
    printf("reaped %d\n", reaped);
    fflush(stdout);
    if (killAtEnd) kill(getpid(), SIGKILL);
    return failed ? 1 : (reaped == 1 ? 0 : 3);
}
