// SPDX-License-Identifier: MIT
// A program with known file I/O, used by the integration tests and the README quick start.
//
// Usage: io_sample DIR
//
// Exactly these calls, on these files in DIR (the tests assert every number):
//   main thread  posix.dat   open(O_CREAT) 1; write 3 (100, 1000, 10000 B); pwrite 2 (4096 B at
//                            offset 20000, 4096 B at offset 24096); close 1
//                            open(O_RDONLY) 1; read 5 (4000, 4000, 4000, 4000, 4000 B requested:
//                            4000, 4000, 4000, 4000, 4000 B returned); pread 1 (512 B at 0); close 1
//   main thread  stdio.dat   fopen("w") 1; fwrite 5 x 512 B; fclose 1
//                            fopen("r") 1; fread 3 (1024, 1024, 1024 requested -> 1024, 1024, 512);
//                            fclose 1
//   worker       thread.dat  open 1; write 7 x 333 B; fsync 1; close 1
//   forked child child.dat   open 1; write 4 x 250 B; close 1; leaves through _exit(0)
// and on stdout one line: "io_sample done".
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_dir[4096];
static char g_buf[32768];

static void pathIn(char* out, size_t cap, const char* name) { snprintf(out, cap, "%s/%s", g_dir, name); }

static void die(const char* what) {
    perror(what);
    exit(1);
}

static void* worker(void* arg) {
    (void)arg;
    char path[4200];
    pathIn(path, sizeof(path), "thread.dat");
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) die("open thread.dat");
    for (int i = 0; i < 7; ++i)
        if (write(fd, g_buf, 333) != 333) die("write thread.dat");
    if (fsync(fd) != 0) die("fsync");
    close(fd);
    return NULL;
}

static void posixPart(void) {
    char path[4200];
    pathIn(path, sizeof(path), "posix.dat");
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) die("open posix.dat");
    static const size_t sizes[] = {100, 1000, 10000};
    for (int i = 0; i < 3; ++i)
        if (write(fd, g_buf, sizes[i]) != (ssize_t)sizes[i]) die("write");
    if (pwrite(fd, g_buf, 4096, 20000) != 4096) die("pwrite");
    if (pwrite(fd, g_buf, 4096, 24096) != 4096) die("pwrite");
    close(fd);

    fd = open(path, O_RDONLY);
    if (fd < 0) die("open posix.dat for reading");
    for (int i = 0; i < 5; ++i)
        if (read(fd, g_buf, 4000) != 4000) die("read");
    if (pread(fd, g_buf, 512, 0) != 512) die("pread");
    close(fd);
}

static void stdioPart(void) {
    char path[4200];
    pathIn(path, sizeof(path), "stdio.dat");
    FILE* f = fopen(path, "w");
    if (!f) die("fopen stdio.dat");
    for (int i = 0; i < 5; ++i)
        if (fwrite(g_buf, 1, 512, f) != 512) die("fwrite");
    fclose(f);
    f = fopen(path, "r");
    if (!f) die("fopen stdio.dat for reading");
    size_t got = 0;
    for (int i = 0; i < 3; ++i) got += fread(g_buf, 1, 1024, f);
    if (got != 2560) die("fread");
    fclose(f);
}

static void childPart(void) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        char path[4200];
        pathIn(path, sizeof(path), "child.dat");
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) _exit(2);
        for (int i = 0; i < 4; ++i)
            if (write(fd, g_buf, 250) != 250) _exit(3);
        close(fd);
        _exit(0); // like a data-loader worker: no atexit handlers, no stdio flush
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("child");
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    snprintf(g_dir, sizeof(g_dir), "%s", argv[1]);
    memset(g_buf, 'x', sizeof(g_buf));
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) die("pthread_create");
    pthread_join(t, NULL);
    posixPart();
    stdioPart();
    childPart();
    printf("io_sample done\n");
    return 0;
}
