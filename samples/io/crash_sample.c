// SPDX-License-Identifier: MIT
// Writes 10 x 100 bytes to DIR/crash.dat, then kills itself with SIGKILL (no exit path runs).
// The tests check that the 10 writes survive in the trace and the kill is counted. With a second
// argument "vfork", it first runs /bin/true through vfork + execv and waits for it: the child's
// exec (which runs in the parent's memory until it succeeds) must not mark the parent as ended.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) return 2;
    if (argc == 3 && strcmp(argv[2], "vfork") == 0) {
        pid_t child = vfork();
        if (child == 0) {
            char* const args[] = {"/bin/true", NULL};
            execv(args[0], args);
            _exit(127);
        }
        int status;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0) return 1;
    }
    char path[4200], buf[100] = {0};
    snprintf(path, sizeof(path), "%s/crash.dat", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    for (int i = 0; i < 10; ++i)
        if (write(fd, buf, sizeof(buf)) != sizeof(buf)) return 1;
    kill(getpid(), SIGKILL);
    return 0;
}
