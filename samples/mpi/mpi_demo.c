// SPDX-License-Identifier: MIT
// The demo program (`scripts/setup.sh demo`, the Python package's tests): a time-stepped solver
// in miniature with one overloaded rank and a checkpoint written the slow way. Meant for 4
// ranks; any number >= 2 works.
//
//   mpi_demo [OUTDIR]          (OUTDIR: where the ranks write their files; default .)
//
// Every rank runs STEPS steps of
//   compute: spin COMPUTE_MS ms of wall time; the last rank (the straggler) spins SLOW_FACTOR
//            times as long, so every other rank waits for it in the next call;
//   MPI_Allreduce of one double (the residual);
// then writes its checkpoint OUTDIR/mpi_demo.rank<R>.ckpt in CKPT_WRITES write() calls of
// WRITE_BYTES each on a file opened O_DSYNC: small synchronous requests, each waits for the
// storage (on a disk; on tmpfs they cost next to nothing); then MPI_Barrier and MPI_Finalize.
// Rank 0 prints the numbers the report and the tests check:
//   "mpi_demo: ranks=4 steps=12 straggler=3 writes_per_rank=128 bytes_per_rank=524288"
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 12
#define COMPUTE_MS 20.0
#define SLOW_FACTOR 3.0
#define WRITE_BYTES 4096
#define CKPT_WRITES 128

static void spinMs(double ms) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

/// Writes the checkpoint in small synchronous writes; the number of bytes written, -1 when the
/// file cannot be created.
static long writeCheckpoint(const char* dir, int rank) {
    char path[4096];
    snprintf(path, sizeof path, "%s/mpi_demo.rank%d.ckpt", dir, rank);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_DSYNC, 0644);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    static char block[WRITE_BYTES];
    memset(block, 'a' + rank % 26, sizeof block);
    long written = 0;
    for (int i = 0; i < CKPT_WRITES; ++i) {
        ssize_t n = write(fd, block, WRITE_BYTES);
        if (n > 0)
            written += n;
    }
    close(fd);
    return written;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int straggler = size - 1;
    const double computeMs = rank == straggler ? COMPUTE_MS * SLOW_FACTOR : COMPUTE_MS;
    double residual = 1.0, sum = 0.0;
    for (int step = 0; step < STEPS; ++step) {
        spinMs(computeMs);
        MPI_Allreduce(&residual, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    long written = writeCheckpoint(argc > 1 ? argv[1] : ".", rank);
    if (written < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_demo: ranks=%d steps=%d straggler=%d writes_per_rank=%d bytes_per_rank=%ld\n",
               size, STEPS, straggler, CKPT_WRITES, written);
    MPI_Finalize();
    return 0;
}
