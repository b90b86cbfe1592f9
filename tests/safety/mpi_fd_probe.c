/* SPDX-License-Identifier: MIT
 * An MPI program that lists its own descriptors after running for a while, for the test that
 * the agent holds no descriptor in a profiled MPI rank (tests/safety/agent_fd_test.cpp).
 * Each rank writes "fd N TARGET" lines, then "end", to DIR/rank-R.txt.
 *   mpi_fd_probe DIR
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double nowMs(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Long enough for several counter periods and a thread discovery (100 ms). */
    double t0 = nowMs();
    int more = 1;
    while (more) { /* every rank stops at the same iteration */
        int mine = nowMs() - t0 < 250;
        MPI_Allreduce(&mine, &more, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    /* Name the output file first: its descriptor is then one of the program's own. */
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argc > 1 ? argv[1] : ".", rank);
    FILE* out = fopen(path, "w");
    DIR* d = opendir("/proc/self/fd");
    if (!out || !d) return 1;
    int skip[2] = {dirfd(d), fileno(out)};
    struct dirent* e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        int fd = atoi(e->d_name);
        if (fd == skip[0] || fd == skip[1]) continue;
        char link[64], target[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        fprintf(out, "fd %d %s\n", fd, target);
    }
    closedir(d);
    fprintf(out, "end\n");
    fclose(out);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
