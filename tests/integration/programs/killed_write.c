/* SPDX-License-Identifier: MIT
 * Killed inside a long write (issue 23): writes 1 MiB into the FIFO argv[1], which nobody reads
 * (the pipe holds 64 KiB), and is SIGKILLed meanwhile by a child it forked before (after 300 ms).
 * The trace must hold the write as unfinished, on the FIFO, with 1048576 bytes requested. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

int main(int argc, char** argv) {
    int fd = open(argc > 1 ? argv[1] : "fifo", O_RDWR);
    if (fd < 0) return 2;
    pid_t parent = getpid();
    if (fork() == 0) {
        usleep(300000);
        kill(parent, SIGKILL);
        _exit(0);
    }
    static char buf[1 << 20];
    ssize_t n = write(fd, buf, sizeof(buf));
    return n < 0 ? 3 : 0;
}
