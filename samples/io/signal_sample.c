// SPDX-License-Identifier: MIT
// I/O inside a signal handler: SIGUSR1's handler writes 64 bytes to DIR/signal.dat; main raises
// it 3 times between its own 2 writes of 10 bytes. Expected: 5 writes, 3 x 64 B + 2 x 10 B.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int g_fd = -1;

static void onSignal(int sig) {
    (void)sig;
    static const char buf[64] = {0};
    if (write(g_fd, buf, sizeof(buf)) != sizeof(buf)) _exit(3);
}

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    char path[4200];
    snprintf(path, sizeof(path), "%s/signal.dat", argv[1]);
    g_fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (g_fd < 0) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = onSignal;
    sigaction(SIGUSR1, &sa, NULL);
    if (write(g_fd, "0123456789", 10) != 10) return 1;
    for (int i = 0; i < 3; ++i) raise(SIGUSR1);
    if (write(g_fd, "0123456789", 10) != 10) return 1;
    close(g_fd);
    return 0;
}
