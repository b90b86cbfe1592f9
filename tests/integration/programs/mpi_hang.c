/* SPDX-License-Identifier: MIT
 * MPI programs that hang in known ways (issue 23), stopped by `hpcprof run --timeout`:
 *   barrier   3 ranks: two barriers together, then rank 2 skips the third and sleeps: ranks 0
 *             and 1 wait in MPI_Barrier instance 2 of MPI_COMM_WORLD.
 *   mismatch  3 ranks: one barrier together, then ranks 0 and 1 call MPI_Allreduce and rank 2
 *             MPI_Bcast (root 0) on MPI_COMM_WORLD: instance 1 of two different operations.
 *   chain     3 ranks: rank 0 receives from rank 1 (tag 7), rank 1 from rank 2 (tag 8), rank 2
 *             computes (a busy loop) and never sends: the wait chain 0 -> 1 -> 2.
 *   waits     3 ranks, the chain through non-blocking receives: rank 0 posts MPI_Irecv from rank
 *             1 (tag 17, 64 doubles) and waits in MPI_Wait; rank 1 posts six small MPI_Isend to
 *             rank 0 (tag 99, never received: they complete eagerly), then two MPI_Irecv from rank
 *             2 (tags 19 and 18, 32 doubles each) and waits in MPI_Waitall on the eight: the
 *             in-flight line names the last request, the receive of tag 18 (a wait's entry looks
 *             at its first and last requests first); rank 2 computes.
 *   halo      3 ranks, the chain through waits whose receives lie between their sends (a halo
 *             exchange posting its sends first and last): rank 0 posts two MPI_Isend to rank 2
 *             (tag 98), MPI_Irecv from rank 1 (tags 27 and 28, 8 doubles each), two more
 *             MPI_Isend to rank 2, and waits in MPI_Waitall on the six; rank 1 posts two
 *             MPI_Isend to rank 0 (tag 99), starts a persistent receive from rank 2 (MPI_Recv_init,
 *             tag 21, 16 doubles), two more MPI_Isend to rank 0, and waits in MPI_Waitall on the
 *             five. The sends (1 double each, never received) complete eagerly; the in-flight
 *             lines name the receives: rank 0 waits for 1 (tag 27), rank 1 for 2 (tag 21), not
 *             the sends' peers 2 and 0. Rank 2 computes.
 *   sendrecv  3 ranks: rank 0 calls MPI_Sendrecv, sending 1 double to rank 2 (tag 5, eager: it
 *             completes) and receiving 4 doubles from rank 1 (tag 6); rank 1 calls MPI_Ssend of 2
 *             doubles to rank 2 (tag 9), which waits for a receive that never comes; rank 2
 *             computes: the chain 0 -> 1 -> 2, "from rank 1" and "to rank 2".
 *   fifo      3 ranks: rank 1 reads 4096 bytes from the FIFO argv[2] that nobody writes; ranks
 *             0 and 2 wait for it in MPI_Barrier instance 0 of MPI_COMM_WORLD.
 * Each rank prints "rank R ready" before it starts to hang (the test waits for it). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void computeForever(void) {
    volatile double x = 0;
    for (;;)
        for (int i = 0; i < 1000000; ++i) x += i * 1e-9;
}

static void ready(int rank) {
    printf("rank %d ready\n", rank);
    fflush(stdout);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char* mode = argc > 1 ? argv[1] : "barrier";
    if (strcmp(mode, "barrier") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        ready(rank);
        if (rank == 2) computeForever();
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "mismatch") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        ready(rank);
        double in = rank, out = 0;
        if (rank == 2) MPI_Bcast(&in, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        else MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(mode, "chain") == 0) {
        double buf[128];
        ready(rank);
        if (rank == 0) MPI_Recv(buf, 128, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1) MPI_Recv(buf, 128, MPI_DOUBLE, 2, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 2) computeForever();
    } else if (strcmp(mode, "waits") == 0) {
        double buf[64], small[6] = {0};
        MPI_Request reqs[8];
        ready(rank);
        if (rank == 0) {
            MPI_Irecv(buf, 64, MPI_DOUBLE, 1, 17, MPI_COMM_WORLD, &reqs[0]);
            MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        }
        if (rank == 1) {
            for (int i = 0; i < 6; ++i)
                MPI_Isend(&small[i], 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, &reqs[i]);
            MPI_Irecv(buf + 32, 32, MPI_DOUBLE, 2, 19, MPI_COMM_WORLD, &reqs[6]);
            MPI_Irecv(buf, 32, MPI_DOUBLE, 2, 18, MPI_COMM_WORLD, &reqs[7]);
            MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE);
        }
        if (rank == 2) computeForever();
    } else if (strcmp(mode, "halo") == 0) {
        double buf[16], small[4] = {0};
        MPI_Request reqs[6];
        ready(rank);
        if (rank == 0) {
            for (int i = 0; i < 2; ++i)
                MPI_Isend(&small[i], 1, MPI_DOUBLE, 2, 98, MPI_COMM_WORLD, &reqs[i]);
            MPI_Irecv(buf, 8, MPI_DOUBLE, 1, 27, MPI_COMM_WORLD, &reqs[2]);
            MPI_Irecv(buf + 8, 8, MPI_DOUBLE, 1, 28, MPI_COMM_WORLD, &reqs[3]);
            for (int i = 2; i < 4; ++i)
                MPI_Isend(&small[i], 1, MPI_DOUBLE, 2, 98, MPI_COMM_WORLD, &reqs[i + 2]);
            MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE);
        }
        if (rank == 1) {
            for (int i = 0; i < 2; ++i)
                MPI_Isend(&small[i], 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, &reqs[i]);
            MPI_Recv_init(buf, 16, MPI_DOUBLE, 2, 21, MPI_COMM_WORLD, &reqs[2]);
            MPI_Start(&reqs[2]);
            for (int i = 2; i < 4; ++i)
                MPI_Isend(&small[i], 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, &reqs[i + 1]);
            MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE);
        }
        if (rank == 2) computeForever();
    } else if (strcmp(mode, "sendrecv") == 0) {
        double out[2] = {0}, in[4];
        ready(rank);
        if (rank == 0)
            MPI_Sendrecv(out, 1, MPI_DOUBLE, 2, 5, in, 4, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1) MPI_Ssend(out, 2, MPI_DOUBLE, 2, 9, MPI_COMM_WORLD);
        if (rank == 2) computeForever();
    } else if (strcmp(mode, "fifo") == 0) {
        ready(rank);
        if (rank == 1) {
            /* O_RDWR: the open does not wait for a writer; the read then waits for data. */
            int fd = open(argc > 2 ? argv[2] : "fifo", O_RDWR);
            char buf[4096];
            if (fd >= 0 && read(fd, buf, sizeof(buf)) < 0) perror("read");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
