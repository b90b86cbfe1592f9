/* SPDX-License-Identifier: MIT
 * An 8-rank job for tests/integration/nodes_test.cpp (simulated nodes, 2 ranks per node): each
 * of ITERS iterations every rank "computes" (rank 7 three times as long: wait states for the
 * others), writes WRITE_BYTES to its own file in DIR, exchanges SR_BYTES with the rank two ahead
 * (another node) by MPI_Sendrecv, then MPI_Allreduce's COUNT doubles. Prints
 *   rank R allreduce N sendrecv N writes N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#define ITERS 10
#define COUNT 1024
#define SR_BYTES 4096
#define WRITE_BYTES 1000

static void sleepMs(double ms) {
    long ns = (long)(ms * 1e6);
    struct timespec d = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&d, &d) != 0) {
    }
}

int main(int argc, char** argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.dat", argc > 1 ? argv[1] : ".", rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    static char block[WRITE_BYTES];
    static char sendBuf[SR_BYTES], recvBuf[SR_BYTES];
    double in[COUNT], out[COUNT];
    for (int i = 0; i < COUNT; ++i) in[i] = rank + i;
    long allreduces = 0, sendrecvs = 0, writes = 0;
    for (int it = 0; it < ITERS; ++it) {
        sleepMs(rank == size - 1 ? 15.0 : 5.0);
        if (fd >= 0 && write(fd, block, WRITE_BYTES) == WRITE_BYTES) ++writes;
        MPI_Sendrecv(sendBuf, SR_BYTES, MPI_BYTE, (rank + 2) % size, 7, recvBuf, SR_BYTES, MPI_BYTE,
                     (rank + size - 2) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ++sendrecvs;
        MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ++allreduces;
    }
    if (fd >= 0) close(fd);
    printf("rank %d allreduce %ld sendrecv %ld writes %ld\n", rank, allreduces, sendrecvs, writes);
    MPI_Finalize();
    return 0;
}
