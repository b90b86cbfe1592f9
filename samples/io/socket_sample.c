// SPDX-License-Identifier: MIT
// TCP traffic over loopback, as a gloo-style transport would move it. A server thread accepts one
// connection; the client sends 3 x 10000 B with send(); the server recv()s until it has 30000 B,
// then answers 100 B with write(); the client read()s them. Prints "socket_sample done".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int g_listener;
static char g_buf[65536];

static void* serve(void* arg) {
    (void)arg;
    int c = accept(g_listener, NULL, NULL);
    if (c < 0) return NULL;
    static char in[65536];
    long got = 0;
    while (got < 30000) {
        ssize_t n = recv(c, in, sizeof(in), 0);
        if (n <= 0) break;
        got += n;
    }
    if (write(c, g_buf, 100) != 100) perror("write");
    close(c);
    return NULL;
}

int main(void) {
    g_listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(g_listener, (struct sockaddr*)&addr, len) != 0 || listen(g_listener, 1) != 0 ||
        getsockname(g_listener, (struct sockaddr*)&addr, &len) != 0) {
        perror("listen");
        return 1;
    }
    pthread_t server;
    pthread_create(&server, NULL, serve, NULL);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr*)&addr, sizeof(addr)) != 0) {
        perror("connect");
        return 1;
    }
    for (int i = 0; i < 3; ++i)
        if (send(s, g_buf, 10000, 0) != 10000) return 1;
    long got = 0;
    while (got < 100) {
        ssize_t n = read(s, g_buf, 100 - got);
        if (n <= 0) break;
        got += n;
    }
    close(s);
    pthread_join(server, NULL);
    close(g_listener);
    printf("socket_sample done\n");
    return got == 100 ? 0 : 1;
}
