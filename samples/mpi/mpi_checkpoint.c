// SPDX-License-Identifier: MIT
// An MPI program whose only I/O of its own is a checkpoint: every rank writes CHUNKS chunks of
// 1 MiB to its own file in the folder given as argument (default: the current folder), then
// reads them back, with an MPI_Barrier around. Everything else the trace records as I/O is the
// runtime's: Open MPI reading /proc, /sys and its configuration at MPI_Init. For the
// file-class tests: the program's data files lead the report's top files and no small-I/O
// finding fires on the start-up reads.
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNKS 8
#define CHUNK_BYTES (1 << 20)

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.%d", argc > 1 ? argv[1] : ".", rank);
    char* buf = malloc(CHUNK_BYTES);
    memset(buf, 'a' + rank, CHUNK_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    long written = 0, read_back = 0;
    for (int i = 0; fd >= 0 && i < CHUNKS; ++i) written += write(fd, buf, CHUNK_BYTES);
    if (fd >= 0) lseek(fd, 0, SEEK_SET);
    for (int i = 0; fd >= 0 && i < CHUNKS; ++i) read_back += read(fd, buf, CHUNK_BYTES);
    if (fd >= 0) close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    long total = 0;
    MPI_Reduce(&written, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_checkpoint: %ld bytes written, %ld read back by rank 0\n", total, read_back);
    free(buf);
    MPI_Finalize();
    return 0;
}
