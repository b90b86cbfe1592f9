/* SPDX-License-Identifier: MIT
 * A 1-D halo exchange with MPI_Sendrecv and MPI_Sendrecv_replace and a known load imbalance,
 * for tests/integration/mpi_sendrecv_test.cpp.
 *
 * Every rank "computes" COMPUTE_MS per iteration, rank SLOW_RANK twice as long. The work is a
 * sleep, not a spin: the test runs 4 ranks on a 2-core machine, where spinning ranks would take
 * the CPU from the ranks whose message has arrived and make every call's duration mostly
 * scheduling delay (for hpcprof it is the same: time outside MPI is the rank's own work). Each iteration then swaps
 * HALO doubles with both neighbours: one Sendrecv to the right (tag 1, receiving from the left)
 * and one to the left (tag 2, receiving from the right). The boundaries are not periodic: rank 0
 * has no left neighbour and the last rank no right one (MPI_PROC_NULL). Phase 1 uses
 * MPI_Sendrecv for ITERS_SENDRECV iterations, phase 2 MPI_Sendrecv_replace (tags 3 and 4) for
 * ITERS_REPLACE iterations.
 *
 * Each rank measures the time it spends inside the Sendrecv calls with MPI_Wtime and prints
 *   rank R sendrecv_s S compute_s C calls N
 * (S: seconds inside MPI_Sendrecv / MPI_Sendrecv_replace, C: seconds computing, N: calls).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define COMPUTE_MS 25.0
#define SLOW_RANK 2
#define ITERS_SENDRECV 40
#define ITERS_REPLACE 20
#define HALO 1024

static double compute_s, sendrecv_s;
static long calls;

static void compute(int rank) {
    double t0 = MPI_Wtime();
    long ns = (long)((rank == SLOW_RANK ? 2 * COMPUTE_MS : COMPUTE_MS) * 1e6);
    struct timespec d = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&d, &d) != 0) {
    }
    compute_s += MPI_Wtime() - t0;
}

static void exchange(double* out, double* in, int dest, int source, int tag) {
    double t0 = MPI_Wtime();
    MPI_Sendrecv(out, HALO, MPI_DOUBLE, dest, tag, in, HALO, MPI_DOUBLE, source, tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sendrecv_s += MPI_Wtime() - t0;
    ++calls;
}

static void exchangeReplace(double* buf, int dest, int source, int tag) {
    MPI_Status st;
    double t0 = MPI_Wtime();
    MPI_Sendrecv_replace(buf, HALO, MPI_DOUBLE, dest, tag, source, tag, MPI_COMM_WORLD, &st);
    sendrecv_s += MPI_Wtime() - t0;
    ++calls;
}

int main(int argc, char** argv) {
    static double u[HALO], left[HALO], right[HALO];
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int lo = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int hi = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    for (int i = 0; i < HALO; ++i) u[i] = rank;

    /* No barrier before or after: the ranks' start-up skew is waited for inside the first
     * Sendrecv calls, where the program measures it too, and no collective wait is mixed in. */
    for (int it = 0; it < ITERS_SENDRECV; ++it) {
        compute(rank);
        exchange(u, left, hi, lo, 1);  /* my right edge goes right, the left one arrives */
        exchange(u, right, lo, hi, 2); /* my left edge goes left, the right one arrives */
    }
    for (int it = 0; it < ITERS_REPLACE; ++it) {
        compute(rank);
        memcpy(left, u, sizeof u);
        exchangeReplace(left, hi, lo, 3);
        memcpy(right, u, sizeof u);
        exchangeReplace(right, lo, hi, 4);
    }
    printf("rank %d sendrecv_s %.6f compute_s %.6f calls %ld\n", rank, sendrecv_s, compute_s,
           calls);
    MPI_Finalize();
    return 0;
}
