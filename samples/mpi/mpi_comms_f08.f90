! SPDX-License-Identifier: MIT
! The Fortran (use mpi_f08) counterpart of mpi_comms.c, for exactly 4 ranks: every communicator
! constructor through the Fortran bindings, one collective on each new communicator and
! messages on a Cartesian sub-grid and on an intercommunicator. Keys (as in mpi_comms.c):
!   cart world.0@0; rows (MPI_Cart_sub) world.0@0.0@0 and world.0@0.0@2; graph world.1@0;
!   adjacent world.2@0; dist world.3@0; copy (MPI_Comm_idup) world.4@0;
!   half world.5@0 / world.5@1; inter inter(0,2|1,3).0; merged inter(0,2|1,3).0.0@0
program mpi_comms_f08
    use mpi_f08
    implicit none
    type(MPI_Comm) :: cart, rows, graph, adjacent, dist, copy, half, inter, merged
    type(MPI_Request) :: req
    integer :: rank, rowRank, interRank, v, s, left, right
    integer :: dims(2), gindex(4), edges(8), ring(2), degrees(1), me(1)
    logical :: periods(2), keep(2), even

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    v = rank
    dims = 2
    periods = .false.
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart)
    keep = [.false., .true.]
    call MPI_Cart_sub(cart, keep, rows)
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, rows)
    call MPI_Comm_rank(rows, rowRank)
    if (rowRank == 0) then
        call MPI_Send(v, 1, MPI_INTEGER, 1, 4, rows)
    else
        call MPI_Recv(v, 1, MPI_INTEGER, 0, 4, rows, MPI_STATUS_IGNORE)
    end if

    gindex = [2, 4, 6, 8]
    edges = [3, 1, 0, 2, 1, 3, 2, 0]
    call MPI_Graph_create(MPI_COMM_WORLD, 4, gindex, edges, .false., graph)
    call MPI_Barrier(graph)
    left = mod(rank + 3, 4)
    right = mod(rank + 1, 4)
    ring = [left, right]
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, ring, MPI_UNWEIGHTED, 2, ring, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., adjacent)
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, adjacent)
    degrees = 2
    me = rank
    call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, degrees, ring, MPI_UNWEIGHTED, &
                               MPI_INFO_NULL, .false., dist)
    call MPI_Bcast(v, 1, MPI_INTEGER, 2, dist)

    call MPI_Comm_idup(MPI_COMM_WORLD, copy, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, copy)

    even = mod(rank, 2) == 0
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, merge(1, 0, even), 7, inter)
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, inter)
    call MPI_Comm_rank(inter, interRank)
    if (even) then
        call MPI_Send(v, 1, MPI_INTEGER, interRank, 8, inter)
    else
        call MPI_Recv(v, 1, MPI_INTEGER, interRank, 8, inter, MPI_STATUS_IGNORE)
    end if
    call MPI_Intercomm_merge(inter, .not. even, merged)
    call MPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, merged)

    call MPI_Comm_free(merged)
    call MPI_Comm_free(inter)
    call MPI_Comm_free(half)
    call MPI_Comm_free(copy)
    call MPI_Comm_free(dist)
    call MPI_Comm_free(adjacent)
    call MPI_Comm_free(graph)
    call MPI_Comm_free(rows)
    call MPI_Comm_free(cart)
    if (rank == 0) print '(A)', 'mpi_comms_f08 done'
    call MPI_Finalize()
end program mpi_comms_f08
