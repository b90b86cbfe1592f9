// SPDX-License-Identifier: MIT
// Two threads with the same thread id, as the kernel hands out ids again in a long run: thread A
// makes 3 pwrite calls to DIR/reuse.dat and exits; then (as root, through
// /proc/sys/kernel/ns_last_pid) threads are started until one gets A's id, and that thread B
// makes 5 pwrite calls (a thread that gets another id records nothing). Prints "tid reused: yes"
// and A's id, or "tid reused: no" when the id could not be had (no permission, another process
// took it).
//
//   tid_reuse_sample DIR
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static int g_fd;
static pid_t g_firstTid;

static void writeCalls(int n) {
    char byte = 'x';
    for (int i = 0; i < n; ++i) (void)!pwrite(g_fd, &byte, 1, i);
}

static void* first(void* arg) {
    (void)arg;
    g_firstTid = (pid_t)syscall(SYS_gettid);
    writeCalls(3);
    return NULL;
}

static void* second(void* arg) {
    if ((pid_t)syscall(SYS_gettid) != g_firstTid) return NULL;
    *(int*)arg = 1;
    writeCalls(5);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    char path[4200];
    snprintf(path, sizeof(path), "%s/reuse.dat", argv[1]);
    g_fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (g_fd < 0) return 1;
    pthread_t th;
    if (pthread_create(&th, NULL, first, NULL) != 0) return 1;
    pthread_join(th, NULL);
    int reused = 0;
    for (int attempt = 0; attempt < 20 && !reused; ++attempt) {
        FILE* f = fopen("/proc/sys/kernel/ns_last_pid", "w");
        if (!f) break;
        fprintf(f, "%d", (int)g_firstTid - 1);
        if (fclose(f) != 0) break;
        if (pthread_create(&th, NULL, second, &reused) != 0) return 1;
        pthread_join(th, NULL);
    }
    close(g_fd);
    printf("tid reused: %s %d\n", reused ? "yes" : "no", (int)g_firstTid);
    return 0;
}
