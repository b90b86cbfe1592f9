/* SPDX-License-Identifier: MIT
 * A program that uses its descriptor table the way daemons, shells and job wrappers do, for the
 * tests that the agent never holds a descriptor the program can see (tests/safety/agent_fd_test).
 * Every mode but "list" first starts a thread that stays alive (so hpcprof's counter sampler
 * runs, as in any MPI or threaded program) and lets the sampler run for a while; "st-" modes
 * stay single-threaded.
 *
 *   fd_hygiene first-open        prints "first N": the descriptor open() returns first
 *   fd_hygiene count-files       prints "files N": how many files it can open (run it under a
 *                                small `ulimit -n`)
 *   fd_hygiene reuse DIR         closes descriptors 3..63, opens 16 files in DIR read-write
 *                                (they get the low numbers), writes them block by block while
 *                                running, and checks every file offset and every byte
 *   fd_hygiene dup2-pipe         closes 3..63, puts a pipe's read end on 3..20 with dup2 and its
 *                                write end on 21, streams 40000 bytes through it from a thread
 *                                and checks it reads every byte in order
 *   fd_hygiene list              prints "fd N TARGET" for every open descriptor (after the
 *                                sampler has run), then "end"
 *   fd_hygiene st-first-open, st-count-files, st-list: the same without the extra thread
 * Exit code 0 when every check passed; the line "FAIL ..." says what did not.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static double nowMs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Busy for `ms`: the timer samples threads that ran. */
static void spin(double ms) {
    double t0 = nowMs();
    volatile unsigned long x = 0;
    while (nowMs() - t0 < ms) x++;
}

static int g_stop = 0;
static void* idleThread(void* arg) {
    (void)arg;
    while (!__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) {
        spin(1);
        usleep(2000);
    }
    return NULL;
}

static pthread_t g_idle;
static void startThread(void) {
    if (pthread_create(&g_idle, NULL, idleThread, NULL) != 0) {
        printf("FAIL pthread_create\n");
        exit(1);
    }
    spin(60); /* several sampler periods */
}
static void stopThread(void) {
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
    pthread_join(g_idle, NULL);
}

static int firstOpen(void) {
    int fd = open("/dev/null", O_RDONLY);
    printf("first %d\n", fd);
    /* What held the numbers below it (for a failing test's message). */
    for (int below = 0; below < fd; ++below) {
        char link[64], target[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", below);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        printf("below %d %s\n", below, target);
    }
    return fd >= 0 ? 0 : 1;
}

static int countFiles(void) {
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0) ++n;
    printf("files %d (%s)\n", n, strerror(errno));
    return errno == EMFILE ? 0 : 1;
}

static void closeLow(int keepA, int keepB) {
    for (int fd = 3; fd < 64; ++fd)
        if (fd != keepA && fd != keepB) close(fd);
}

enum { kFiles = 16, kBlocks = 40, kBlock = 4096 };

static unsigned char patternByte(int file, int block, int i) { return (unsigned char)(file * 31 + block * 7 + i); }

static int reuse(const char* dir) {
    closeLow(-1, -1);
    int fds[kFiles];
    for (int f = 0; f < kFiles; ++f) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/file%02d", dir, f);
        fds[f] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fds[f] != 3 + f) {
            printf("FAIL file %d opened as descriptor %d, expected %d\n", f, fds[f], 3 + f);
            return 1;
        }
    }
    unsigned char block[kBlock];
    for (int b = 0; b < kBlocks; ++b) {
        for (int f = 0; f < kFiles; ++f) {
            for (int i = 0; i < kBlock; ++i) block[i] = patternByte(f, b, i);
            if (write(fds[f], block, kBlock) != kBlock) {
                printf("FAIL write to file %d block %d: %s\n", f, b, strerror(errno));
                return 1;
            }
            off_t at = lseek(fds[f], 0, SEEK_CUR);
            if (at != (off_t)(b + 1) * kBlock) {
                printf("FAIL file %d offset %lld after block %d, expected %lld\n", f, (long long)at, b,
                       (long long)(b + 1) * kBlock);
                return 1;
            }
        }
        spin(3); /* let the sampler run between blocks */
    }
    /* Read everything back, block by block, while the sampler runs: a read of one of these
     * descriptors by anyone else would move the offset or take bytes. */
    for (int f = 0; f < kFiles; ++f)
        if (lseek(fds[f], 0, SEEK_SET) != 0) return 1;
    for (int b = 0; b < kBlocks; ++b) {
        for (int f = 0; f < kFiles; ++f) {
            if (read(fds[f], block, kBlock) != kBlock) {
                printf("FAIL short read of file %d block %d\n", f, b);
                return 1;
            }
            for (int i = 0; i < kBlock; ++i)
                if (block[i] != patternByte(f, b, i)) {
                    printf("FAIL file %d block %d byte %d differs\n", f, b, i);
                    return 1;
                }
            off_t at = lseek(fds[f], 0, SEEK_CUR);
            if (at != (off_t)(b + 1) * kBlock) {
                printf("FAIL file %d offset %lld after reading block %d, expected %lld\n", f, (long long)at,
                       b, (long long)(b + 1) * kBlock);
                return 1;
            }
        }
        spin(3);
    }
    for (int f = 0; f < kFiles; ++f)
        if (close(fds[f]) != 0) {
            printf("FAIL close of file %d: %s\n", f, strerror(errno));
            return 1;
        }
    printf("reuse ok %d bytes\n", kFiles * kBlocks * kBlock);
    return 0;
}

enum { kStreamBytes = 40000, kStreamChunk = 200 };
enum { kReadEnd = 3, kLastReadEnd = 20, kWriteEnd = 21 };

static void* writer(void* arg) {
    (void)arg;
    unsigned char chunk[kStreamChunk];
    for (int at = 0; at < kStreamBytes; at += kStreamChunk) {
        for (int i = 0; i < kStreamChunk; ++i) chunk[i] = (unsigned char)((at + i) % 251);
        if (write(kWriteEnd, chunk, kStreamChunk) != kStreamChunk) return (void*)1;
        spin(0.5);
    }
    close(kWriteEnd);
    return NULL;
}

static int dup2Pipe(void) {
    int p[2];
    if (pipe(p) != 0) return 1;
    /* Move the pipe's ends out of the way, free the low numbers, then take them with dup2. */
    int r = fcntl(p[0], F_DUPFD, 100), w = fcntl(p[1], F_DUPFD, 100);
    close(p[0]);
    close(p[1]);
    closeLow(-1, -1);
    for (int fd = kReadEnd; fd <= kLastReadEnd; ++fd)
        if (dup2(r, fd) != fd) return 1;
    if (dup2(w, kWriteEnd) != kWriteEnd) return 1;
    close(r);
    close(w);
    pthread_t t;
    if (pthread_create(&t, NULL, writer, NULL) != 0) return 1;
    unsigned char buf[4096];
    long total = 0;
    int bad = -1;
    for (;;) {
        ssize_t n = read(kReadEnd, buf, sizeof(buf));
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i)
            if (bad < 0 && buf[i] != (unsigned char)((total + i) % 251)) bad = (int)(total + i);
        total += n;
        /* EOF needs every write end closed: the copies on 4..20 are read ends only. */
    }
    void* rc = NULL;
    pthread_join(t, &rc);
    if (rc != NULL) {
        printf("FAIL writer\n");
        return 1;
    }
    if (total != kStreamBytes || bad >= 0) {
        printf("FAIL pipe gave %ld bytes (expected %d), first wrong byte at %d\n", total, kStreamBytes, bad);
        return 1;
    }
    printf("pipe ok %ld bytes\n", total);
    return 0;
}

static int list(void) {
    DIR* d = opendir("/proc/self/fd");
    if (!d) return 1;
    int self = dirfd(d);
    struct dirent* e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        int fd = atoi(e->d_name);
        if (fd == self) continue;
        char link[64], target[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        printf("fd %d %s\n", fd, target);
    }
    closedir(d);
    printf("end\n");
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fd_hygiene first-open|count-files|reuse DIR|dup2-pipe|list|st-...\n");
        return 2;
    }
    const char* mode = argv[1];
    int singleThreaded = strncmp(mode, "st-", 3) == 0;
    if (singleThreaded)
        mode += 3;
    else
        startThread();
    int rc = 2;
    if (strcmp(mode, "first-open") == 0) rc = firstOpen();
    if (strcmp(mode, "count-files") == 0) rc = countFiles();
    if (strcmp(mode, "reuse") == 0 && argc > 2) rc = reuse(argv[2]);
    if (strcmp(mode, "dup2-pipe") == 0) rc = dup2Pipe();
    if (strcmp(mode, "list") == 0) rc = list();
    if (!singleThreaded) stopThread();
    fflush(stdout);
    return rc;
}
