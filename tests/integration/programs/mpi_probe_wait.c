/* SPDX-License-Identifier: MIT
 * Workers that probe for work while rank 0 prepares it, for tests/integration/mpi_probe_test.cpp.
 *
 * ROUNDS times, rank 0 "prepares" a task for PREPARE_MS (a sleep: the test runs on 2 cores and
 * the workers spin) and sends one int to every worker. Each worker polls MPI_Iprobe in a tight
 * loop until the task is there, then receives it: the loop's unsuccessful probes are what
 * hpcprof folds into one polling event, and their time is waiting for rank 0, not transfer.
 *
 * Each rank prints
 *   rank R probe_s S compute_s C calls N
 * (S: seconds in its probe loops, C: seconds preparing (rank 0), N: tasks sent or received).
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define ROUNDS 10
#define PREPARE_MS 30

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double probe_s = 0, compute_s = 0;
    long calls = 0;
    for (int round = 0; round < ROUNDS; ++round) {
        int task = round;
        if (rank == 0) {
            double t0 = MPI_Wtime();
            struct timespec d = {0, PREPARE_MS * 1000000L};
            while (nanosleep(&d, &d) != 0) {
            }
            compute_s += MPI_Wtime() - t0;
            for (int w = 1; w < size; ++w, ++calls) MPI_Send(&task, 1, MPI_INT, w, 7, MPI_COMM_WORLD);
        } else {
            double t0 = MPI_Wtime();
            int flag = 0;
            while (!flag) MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            probe_s += MPI_Wtime() - t0;
            MPI_Recv(&task, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ++calls;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d probe_s %.6f compute_s %.6f calls %ld\n", rank, probe_s, compute_s, calls);
    MPI_Finalize();
    return 0;
}
