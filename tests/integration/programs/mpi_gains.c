/* SPDX-License-Identifier: MIT
 * Imbalanced work followed by a large MPI_Allreduce, for tests/integration/mpi_gains_test.cpp:
 * the same waiting time is exposed communication, load-imbalance wait and the wait a straggler
 * inflicts, so the findings' estimated gains add up to more than the run and their exclusive
 * gains must not.
 *
 * Each of ITERS iterations every rank "computes" COMPUTE_MS, rank SLOW_RANK SLOW_FACTOR times as
 * long (a sleep, not a spin: 4 ranks share 2 cores in the tests, and for hpcprof time outside
 * MPI is the rank's own work either way), then all ranks MPI_Allreduce COUNT doubles (2 MiB).
 * Each rank measures its time computing and inside MPI_Allreduce with MPI_Wtime and prints
 *   rank R allreduce_s A compute_s C calls N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COMPUTE_MS 10.0
#define SLOW_RANK 3
#define SLOW_FACTOR 4
#define ITERS 20
#define COUNT (256 * 1024)

static void sleepMs(double ms) {
    long ns = (long)(ms * 1e6);
    struct timespec d = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&d, &d) != 0) {
    }
}

int main(int argc, char** argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double* in = malloc(COUNT * sizeof(double));
    double* out = malloc(COUNT * sizeof(double));
    for (int i = 0; i < COUNT; ++i) in[i] = rank + i;
    double computeS = 0, allreduceS = 0;
    long calls = 0;
    for (int it = 0; it < ITERS; ++it) {
        double t0 = MPI_Wtime();
        sleepMs(rank == SLOW_RANK ? SLOW_FACTOR * COMPUTE_MS : COMPUTE_MS);
        double t1 = MPI_Wtime();
        MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        allreduceS += MPI_Wtime() - t1;
        computeS += t1 - t0;
        ++calls;
    }
    printf("rank %d allreduce_s %.6f compute_s %.6f calls %ld\n", rank, allreduceS, computeS, calls);
    fflush(stdout);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
