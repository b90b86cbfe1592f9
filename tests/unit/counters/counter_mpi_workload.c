/* SPDX-License-Identifier: MIT
 * MPI compute loop for the oversubscription tests: every rank does the same fixed amount of
 * arithmetic per iteration (so ranks that share a core take longer), then an MPI_Allreduce.
 *   counter_mpi_workload ITERATIONS WORK_MILLIONS
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int iterations = argc > 1 ? atoi(argv[1]) : 10;
    long work = (argc > 2 ? atol(argv[2]) : 20) * 1000000L;
    volatile double x = 1.0;
    double sum = 0;
    for (int it = 0; it < iterations; ++it) {
        for (long i = 0; i < work; ++i) x = x * 1.0000001 + 1e-9;
        double local = x, global = 0;
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += global;
    }
    MPI_Finalize();
    return sum > 0 ? 0 : 1;
}
