// SPDX-License-Identifier: MIT
// A ring halo exchange with non-blocking calls and one deliberately late rank, for the
// non-blocking wait-state tests. Run on 3 or more ranks.
//
// STEPS steps; in each, every rank spins 1 ms, posts MPI_Irecv from its left (tag 1) and right
// (tag 2) neighbours and MPI_Isend to its right (tag 1) and left (tag 2) neighbours, 128 doubles
// (1 KiB) each, then completes all four with one MPI_Waitall. Rank LATE_RANK sleeps LATE_MS
// before posting in step LATE_STEP, so both its neighbours wait for its sends inside their
// Waitall for about LATE_MS (late sender, blamed on LATE_RANK).
//
// With the argument "persistent" the four transfers are persistent requests (MPI_Recv_init x2,
// MPI_Send_init x2, created once), started each step with one MPI_Startall; then every rank sends
// its right neighbour one double with MPI_Send (tag 3) and receives it from its left with
// MPI_Mprobe + MPI_Mrecv, and one with MPI_Isend (tag 4) received with an MPI_Improbe loop +
// MPI_Imrecv, both completed by one MPI_Waitall; finally the persistent requests are freed.
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 4
#define LATE_RANK 2
#define LATE_STEP 2
#define LATE_MS 120
#define HALO 128

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
    if (size < 3) {
        if (rank == 0) fprintf(stderr, "mpi_halo: run on 3 or more ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    static double sendLeft[HALO], sendRight[HALO], recvLeft[HALO], recvRight[HALO];
    for (int i = 0; i < HALO; ++i) sendLeft[i] = sendRight[i] = rank;
    const int persistent = argc > 1 && strcmp(argv[1], "persistent") == 0;
    MPI_Request reqs[4];
    if (persistent) {
        MPI_Recv_init(recvLeft, HALO, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]);
        MPI_Recv_init(recvRight, HALO, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]);
        MPI_Send_init(sendRight, HALO, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[2]);
        MPI_Send_init(sendLeft, HALO, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[3]);
    }
    for (int step = 0; step < STEPS; ++step) {
        spinMs(1.0);
        if (rank == LATE_RANK && step == LATE_STEP) usleep(LATE_MS * 1000);
        if (persistent) {
            MPI_Startall(4, reqs);
        } else {
            MPI_Irecv(recvLeft, HALO, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]);
            MPI_Irecv(recvRight, HALO, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]);
            MPI_Isend(sendRight, HALO, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[2]);
            MPI_Isend(sendLeft, HALO, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[3]);
        }
        MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
        if (recvLeft[0] != left || recvRight[0] != right) {
            fprintf(stderr, "mpi_halo: rank %d got wrong halo data\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    if (persistent) {
        for (int i = 0; i < 4; ++i) MPI_Request_free(&reqs[i]);
        double one = rank, got = -1, got2 = -1;
        MPI_Send(&one, 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
        MPI_Message msg;
        MPI_Status st;
        MPI_Mprobe(left, 3, MPI_COMM_WORLD, &msg, &st);
        MPI_Mrecv(&got, 1, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
        MPI_Request two[2];
        MPI_Isend(&one, 1, MPI_DOUBLE, right, 4, MPI_COMM_WORLD, &two[0]);
        int flag = 0;
        while (!flag) MPI_Improbe(left, 4, MPI_COMM_WORLD, &flag, &msg, &st);
        MPI_Imrecv(&got2, 1, MPI_DOUBLE, &msg, &two[1]);
        MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
        if (got != left || got2 != left) {
            fprintf(stderr, "mpi_halo: rank %d got wrong probed data\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    MPI_Finalize();
    return 0;
}
