// SPDX-License-Identifier: MIT
// An MPI program with known calls per rank, an imbalance and one deliberately late rank. Run on
// exactly 4 ranks. The integration tests assert every number below.
//
// Every rank: MPI_Init 1; MPI_Comm_split 1 (colour rank % 2); 5 steps of
//   compute ((rank + 1) * 2 ms of spinning; rank 3 sleeps LATE_MS more before step 2's allreduce)
//   MPI_Allreduce on the world, 1024 doubles (8192 B)
//   ring exchange: MPI_Irecv from rank-1 and MPI_Isend to rank+1, 256 ints (1024 B), tag 7,
//   then MPI_Waitall(2)
//   MPI_Bcast on the split communicator, root 0, 100 ints (400 B)
// then MPI_Barrier; rank 0 MPI_Send x10 to rank 1 (16 doubles = 128 B, tag 99), rank 1 MPI_Recv
// x10; rank 2 polls MPI_Test on an MPI_Irecv (tag 5, 1 double) that rank 0 satisfies after
// sleeping 30 ms (MPI_Send 8 B); rank 3 calls MPI_Iprobe exactly 1000 times for a message
// that never comes (tag 4242); MPI_Reduce (1 int, root 0); MPI_Gather (1 int, root 0);
// MPI_Finalize.
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 5
#define LATE_MS 60

static void spinMs(double ms) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0) fprintf(stderr, "mpi_sample: run on exactly 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);

    static double vec[1024], out[1024];
    static int ringOut[256], ringIn[256], bc[100];
    for (int i = 0; i < 1024; ++i) vec[i] = rank + i;
    for (int step = 0; step < STEPS; ++step) {
        spinMs((rank + 1) * 2.0);
        if (rank == 3 && step == 2) usleep(LATE_MS * 1000);
        MPI_Allreduce(vec, out, 1024, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Request reqs[2];
        MPI_Irecv(ringIn, 256, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(ringOut, 256, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        MPI_Bcast(bc, 100, MPI_INT, 0, half);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    double msg[16] = {0};
    if (rank == 0)
        for (int i = 0; i < 10; ++i) MPI_Send(msg, 16, MPI_DOUBLE, 1, 99, MPI_COMM_WORLD);
    if (rank == 1)
        for (int i = 0; i < 10; ++i)
            MPI_Recv(msg, 16, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    double token = 0;
    if (rank == 0) {
        usleep(30 * 1000);
        MPI_Send(&token, 1, MPI_DOUBLE, 2, 5, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Request r;
        int done = 0;
        MPI_Irecv(&token, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &r);
        while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    }

    if (rank == 3) {
        int flag = 0;
        for (int i = 0; i < 1000; ++i)
            MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }

    int one = 1, sum = 0, all[4];
    MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_sample done: sum=%d\n", sum);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
