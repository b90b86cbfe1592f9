/* SPDX-License-Identifier: MIT
 * Every communicator constructor hpcprof wraps, on 4 ranks, with collectives and point-to-point
 * on each new communicator (tests/integration/mpi_comms_test.cpp knows the exact counts):
 *
 *   cart     = MPI_Cart_create(world, 2x2, no reorder)          world.0@0
 *   rows     = MPI_Cart_sub(cart, keep dim 1): {0,1} {2,3}      world.0@0.0@0, world.0@0.0@2
 *   cols     = MPI_Cart_sub(cart, keep dim 0): {0,2} {1,3}      world.0@0.1@0, world.0@0.1@1
 *   graph    = MPI_Graph_create(world, ring)                    world.1@0
 *   adjacent = MPI_Dist_graph_create_adjacent(world, ring)      world.2@0
 *   dist     = MPI_Dist_graph_create(world, ring)               world.3@0
 *   idup     = MPI_Comm_idup(world)                             world.4@0
 *   half     = MPI_Comm_split(world, rank % 2): {0,2} {1,3}     world.5@0, world.5@1
 *   inter    = MPI_Intercomm_create(half, ..., world)           inter(0,2|1,3).0
 *   merged   = MPI_Intercomm_merge(inter, odd ranks high)       inter(0,2|1,3).0.0@0
 *   interdup = MPI_Comm_dup(inter)                              inter(0,2|1,3).0.1@0
 *
 * With the argument "hidden", one more communicator is made by calling libmpi's own
 * PMPI_Comm_dup, past hpcprof's wrappers (as a communicator made where hpcprof cannot see it),
 * and used for 2 allreduces and one message from rank 0 to rank 1.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int g_rank;
static long g_sum; /* results, printed so that nothing is optimised away */

static void reduceTimes(MPI_Comm comm, int n) {
    for (int i = 0; i < n; ++i) {
        int in = g_rank + i, out = 0;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
        g_sum += out;
    }
}

/* One message to `to` and one from `from` (ranks in `comm`), `ints` ints each. */
static void exchange(MPI_Comm comm, int to, int from, int tag, int ints) {
    int out[64] = {0}, in[64];
    MPI_Request req[2];
    MPI_Irecv(in, ints, MPI_INT, from, tag, comm, &req[0]);
    MPI_Isend(out, ints, MPI_INT, to, tag, comm, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    g_sum += in[0];
}

/* Rows and columns of the 2x2 grid: collectives and a message exchange on each. */
static void cartesian(void) {
    int dims[2] = {2, 2}, periods[2] = {0, 0};
    MPI_Comm cart, rows, cols;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int keepCol[2] = {0, 1}, keepRow[2] = {1, 0};
    MPI_Cart_sub(cart, keepCol, &rows);
    MPI_Cart_sub(cart, keepRow, &cols);
    reduceTimes(rows, 3);
    int v = g_rank;
    MPI_Bcast(&v, 1, MPI_INT, 0, rows);
    MPI_Bcast(&v, 1, MPI_INT, 1, rows);
    reduceTimes(cols, 2);
    MPI_Barrier(cols);
    int rowRank, colRank;
    MPI_Comm_rank(rows, &rowRank);
    MPI_Comm_rank(cols, &colRank);
    exchange(rows, 1 - rowRank, 1 - rowRank, 5, 8);
    exchange(cols, 1 - colRank, 1 - colRank, 6, 64);
    g_sum += v;
    MPI_Comm_free(&rows);
    MPI_Comm_free(&cols);
    MPI_Comm_free(&cart);
}

/* Graph topologies over a ring: one collective each, a message to the right on the graph. */
static void graphs(void) {
    int index[4] = {2, 4, 6, 8}, edges[8] = {3, 1, 0, 2, 1, 3, 2, 0};
    MPI_Comm graph, adjacent, dist;
    MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
    int left = (g_rank + 3) % 4, right = (g_rank + 1) % 4;
    /* Weights of 1 rather than MPI_UNWEIGHTED, a pointer constant GCC warns about. */
    int sources[2] = {left, right}, destinations[2] = {left, right}, weights[2] = {1, 1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, weights, 2, destinations, weights,
                                   MPI_INFO_NULL, 0, &adjacent);
    int degrees[1] = {2};
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &g_rank, degrees, destinations, weights,
                          MPI_INFO_NULL, 0, &dist);
    MPI_Barrier(graph);
    reduceTimes(adjacent, 1);
    int v = g_rank;
    MPI_Bcast(&v, 1, MPI_INT, 2, dist);
    exchange(graph, right, left, 7, 4);
    g_sum += v;
    MPI_Comm_free(&graph);
    MPI_Comm_free(&adjacent);
    MPI_Comm_free(&dist);
}

static void idup(void) {
    MPI_Comm copy;
    MPI_Request req;
    MPI_Comm_idup(MPI_COMM_WORLD, &copy, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    reduceTimes(copy, 2);
    MPI_Comm_free(&copy);
}

/* Even and odd ranks as the two groups of an intercommunicator: collectives across the groups
 * (a bcast rooted at world rank 0), a message from each even rank to the odd one beside it,
 * then the merged intracommunicator and a duplicate of the intercommunicator. */
static void intercommunicators(void) {
    MPI_Comm half, inter, merged, interdup;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
    int even = g_rank % 2 == 0;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 7, &inter);
    reduceTimes(inter, 2);
    int v = g_rank;
    int root = even ? (g_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(&v, 1, MPI_INT, root, inter);
    MPI_Barrier(inter);
    int local;
    MPI_Comm_rank(inter, &local);
    double payload[16] = {0};
    if (even)
        MPI_Send(payload, 16, MPI_DOUBLE, local, 8, inter);
    else
        MPI_Recv(payload, 16, MPI_DOUBLE, local, 8, inter, MPI_STATUS_IGNORE);
    MPI_Intercomm_merge(inter, !even, &merged);
    reduceTimes(merged, 3);
    MPI_Comm_dup(inter, &interdup);
    MPI_Barrier(interdup);
    g_sum += v;
    MPI_Comm_free(&interdup);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/* A communicator made past hpcprof: libmpi's own PMPI_Comm_dup, found in libmpi itself. */
static void hidden(void) {
    void* lib = dlopen("libmpi.so.40", RTLD_NOW | RTLD_NOLOAD);
    int (*dup)(MPI_Comm, MPI_Comm*) = lib ? (int (*)(MPI_Comm, MPI_Comm*))dlsym(lib, "PMPI_Comm_dup") : 0;
    if (!dup) {
        fprintf(stderr, "mpi_comms: libmpi's PMPI_Comm_dup not found\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm secret;
    dup(MPI_COMM_WORLD, &secret);
    reduceTimes(secret, 2);
    int v = g_rank;
    if (g_rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 9, secret);
    if (g_rank == 1) MPI_Recv(&v, 1, MPI_INT, 0, 9, secret, MPI_STATUS_IGNORE);
    MPI_Comm_free(&secret);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    cartesian();
    graphs();
    idup();
    intercommunicators();
    if (argc > 1 && strcmp(argv[1], "hidden") == 0) hidden();
    long total = 0;
    MPI_Reduce(&g_sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) printf("mpi_comms done\n");
    MPI_Finalize();
    return total < 0;
}
