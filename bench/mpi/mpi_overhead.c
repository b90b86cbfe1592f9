// SPDX-License-Identifier: MIT
// MPI overhead benchmark: tight loops of 0-byte MPI_Allreduce and of unsuccessful MPI_Iprobe.
// Rank 0 prints the mean wall time per call of each loop in ns ("allreduce N", "iprobe N").
// Run it with and without hpcprof (bench/mpi/overhead.sh).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    int rank, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 1000; ++i) MPI_Allreduce(MPI_IN_PLACE, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < calls; ++i)
        MPI_Allreduce(MPI_IN_PLACE, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    for (long i = 0; i < calls; ++i)
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    double t2 = MPI_Wtime();
    if (rank == 0) printf("allreduce %.1f\niprobe %.1f\n", (t1 - t0) * 1e9 / calls, (t2 - t1) * 1e9 / calls);
    MPI_Finalize();
    return 0;
}
