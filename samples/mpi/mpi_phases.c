// SPDX-License-Identifier: MIT
// A deterministic 2-phase MPI program for the diff tests: the same work on every run, files
// written relative to the working directory, and one phase that an argument lengthens.
//
//   mpi_phases [COMPUTE_PCT]
//
// 0. MPI_Barrier, so that the ranks start the phases together whenever MPI_Init returned;
// 1. compute: every rank spins COMPUTE_MS * COMPUTE_PCT / 100 ms of wall time (default 100 %,
//    so 120 lengthens this phase, and only it, by 20 %);
// 2. I/O: every rank writes phases-rank<R>.dat in its working directory, 16 writes of 64 KiB
//    (1 MiB), reads it back in 16 reads and closes it;
// 3. communication: ALLREDUCES MPI_Allreduce calls of one double, then one MPI_Barrier.
// Rank 0 prints "mpi_phases done: compute_ms=<ms> bytes=<bytes written per rank>".
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COMPUTE_MS 800.0
#define CHUNK (64 * 1024)
#define CHUNKS 16
#define ALLREDUCES 50

static void spinMs(double ms) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

static int writeAndReadBack(int rank) {
    char name[64];
    snprintf(name, sizeof(name), "phases-rank%d.dat", rank);
    static char buf[CHUNK];
    memset(buf, 'a' + rank, sizeof(buf));
    int fd = open(name, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0) return 1;
    for (int i = 0; i < CHUNKS; ++i)
        if (write(fd, buf, CHUNK) != CHUNK) return 1;
    if (lseek(fd, 0, SEEK_SET) != 0) return 1;
    for (int i = 0; i < CHUNKS; ++i)
        if (read(fd, buf, CHUNK) != CHUNK) return 1;
    return close(fd);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const double pct = argc > 1 ? atof(argv[1]) : 100.0;
    const double computeMs = COMPUTE_MS * pct / 100.0;
    MPI_Barrier(MPI_COMM_WORLD);
    spinMs(computeMs);
    if (writeAndReadBack(rank) != 0) {
        perror("mpi_phases");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double x = rank, sum = 0;
    for (int i = 0; i < ALLREDUCES; ++i) MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_phases done: compute_ms=%.0f bytes=%d\n", computeMs, CHUNK * CHUNKS);
    MPI_Finalize();
    return 0;
}
