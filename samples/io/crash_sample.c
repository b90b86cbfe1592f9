// SPDX-License-Identifier: MIT
// Writes 10 x 100 bytes to DIR/crash.dat, then kills itself with SIGKILL (no exit path runs).
// The tests check that the 10 writes survive in the trace and the kill is counted.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    char path[4200], buf[100] = {0};
    snprintf(path, sizeof(path), "%s/crash.dat", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    for (int i = 0; i < 10; ++i)
        if (write(fd, buf, sizeof(buf)) != sizeof(buf)) return 1;
    kill(getpid(), SIGKILL);
    return 0;
}
