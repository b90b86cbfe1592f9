/* SPDX-License-Identifier: MIT
 * A latency-bound MPI phase: in each round every rank exchanges one small message, there and
 * back, with a peer drawn at random (the same pairing on every rank, from a fixed seed). A round
 * takes a few microseconds, so anything that delays one rank (another thread taking its core,
 * a sample inside a call) shows up in the phase's time at once. Prints the phase's wall time
 * (the slowest rank's, seconds) as "pingpong SECONDS", and the CPU time hpcprof's counter
 * sampler threads used in all ranks together (threads named hpcprof-counter; 0 without
 * hpcprof) as "sampler_cpu_ms MS". A single rank exchanges its message with itself.
 *   mpi_pingpong [ROUNDS]    (default 20000)
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pairing of round r: a permutation of the ranks from an LCG seeded by r, paired in order. */
static int peerOf(int rank, int size, unsigned round, int* perm) {
    unsigned s = 2654435761u * (round + 1);
    for (int i = 0; i < size; ++i) perm[i] = i;
    for (int i = size - 1; i > 0; --i) {
        s = s * 1664525u + 1013904223u;
        int j = (int)((s >> 8) % (unsigned)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i + 1 < size; i += 2) {
        if (perm[i] == rank) return perm[i + 1];
        if (perm[i + 1] == rank) return perm[i];
    }
    return -1; /* odd rank count: this rank sits the round out */
}

/* CPU time (ms) of this process's threads named hpcprof-counter, from /proc (schedstat). */
static double samplerCpuMs(void) {
    double ms = 0;
    DIR* d = opendir("/proc/self/task");
    if (!d) return 0;
    struct dirent* e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[512], comm[64] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE* f = fopen(path, "r");
        if (!f) continue;
        if (!fgets(comm, sizeof(comm), f)) comm[0] = 0;
        fclose(f);
        if (strncmp(comm, "hpcprof-counter", 15) != 0) continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
        unsigned long long ns = 0;
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%llu", &ns) != 1) ns = 0;
            fclose(f);
        }
        ms += ns / 1e6;
    }
    closedir(d);
    return ms;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned rounds = argc > 1 ? (unsigned)atol(argv[1]) : 20000u;
    int* perm = malloc(sizeof(int) * (size_t)size);
    double msg[2] = {0, 0}, back[2] = {0, 0};
    /* Warm-up: connections, the recorder's first chunks. */
    for (unsigned r = 0; r < 200; ++r) MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (unsigned r = 0; r < rounds; ++r) {
        if (size == 1) {
            MPI_Sendrecv(msg, 2, MPI_DOUBLE, 0, 7, back, 2, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            continue;
        }
        int peer = peerOf(rank, size, r, perm);
        if (peer < 0) continue;
        if (rank < peer) {
            MPI_Send(msg, 2, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD);
            MPI_Recv(msg, 2, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(msg, 2, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            msg[0] += 1;
            MPI_Send(msg, 2, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD);
        }
    }
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double sampler = samplerCpuMs(), samplers = 0;
    MPI_Reduce(&sampler, &samplers, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("pingpong %.4f\nsampler_cpu_ms %.2f\n", slowest, samplers);
    free(perm);
    MPI_Finalize();
    return 0;
}
