/* SPDX-License-Identifier: MIT
 * An MPI program that knows how its time splits between computation, communication and setup
 * (issue 19, point 1). Between MPI_Init and MPI_Finalize each rank runs ITERATIONS steps of
 * "compute" (spinning on MPI_Wtime for 20 ms, 30 ms on the step's slow rank, which takes turns:
 * wall time, so a loaded machine does not change it) followed by an MPI_Allreduce and an
 * MPI_Sendrecv with its ring neighbours; the other ranks wait in the Allreduce for the slow one,
 * so that every rank spends a known, sizeable share of its time communicating. Halfway through, it builds and frees
 * communicators and a window (setup in the middle of the run). Each rank measures every phase
 * with MPI_Wtime and prints
 *
 *   setup-share rank R compute_s C comm_s M setup_s S elapsed_s E
 *
 * where E runs from the return of MPI_Init to the call of MPI_Finalize (MPI start-up and
 * shutdown are not in any figure), M is the time inside the Allreduce and Sendrecv calls and S
 * the time inside the communicator and window calls.
 */
#include <mpi.h>
#include <stdio.h>

#define ITERATIONS 20
#define COUNT 4096

static double g_comm = 0, g_setup = 0;

static void spin(double seconds) {
    const double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
    }
}

static void exchange(int rank, int size, double* send, double* recv) {
    const double t0 = MPI_Wtime();
    MPI_Allreduce(send, recv, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(send, COUNT, MPI_DOUBLE, (rank + 1) % size, 7, recv, COUNT, MPI_DOUBLE,
                 (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    g_comm += MPI_Wtime() - t0;
}

/* Communicators and a window made and freed in the middle of the run: setup, not communication. */
static void rebuild(int rank, double* buffer) {
    const double t0 = MPI_Wtime();
    MPI_Comm half, copy;
    MPI_Win win;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_dup(half, &copy);
    MPI_Win_create(buffer, COUNT * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&half);
    g_setup += MPI_Wtime() - t0;
}

int main(int argc, char** argv) {
    static double send[COUNT], recv[COUNT];
    int rank = 0, size = 1;
    MPI_Init(&argc, &argv);
    const double begin = MPI_Wtime();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < COUNT; ++i) send[i] = rank + i;
    double compute = 0;
    for (int it = 0; it < ITERATIONS; ++it) {
        const double t0 = MPI_Wtime();
        spin(it % size == rank ? 0.030 : 0.020);
        compute += MPI_Wtime() - t0;
        exchange(rank, size, send, recv);
        if (it == ITERATIONS / 2) rebuild(rank, recv);
    }
    const double elapsed = MPI_Wtime() - begin;
    printf("setup-share rank %d compute_s %.6f comm_s %.6f setup_s %.6f elapsed_s %.6f\n", rank,
           compute, g_comm, g_setup, elapsed);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
