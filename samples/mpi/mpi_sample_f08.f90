! SPDX-License-Identifier: MIT
! The Fortran (use mpi_f08) counterpart of mpi_sample.c, for exactly 4 ranks. Every rank:
! MPI_Init; 3 x MPI_Allreduce of 512 double precision values (4096 B) on MPI_COMM_WORLD;
! a ring MPI_Sendrecv of 64 integers (256 B, tag 3); MPI_Barrier; MPI_Finalize.
program mpi_sample_f08
    use mpi_f08
    implicit none
    integer :: rank, nranks, i
    double precision :: a(512), b(512)
    integer :: sbuf(64), rbuf(64)
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks)
    a = rank
    do i = 1, 3
        call MPI_Allreduce(a, b, 512, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    end do
    sbuf = rank
    call MPI_Sendrecv(sbuf, 64, MPI_INTEGER, mod(rank + 1, nranks), 3, &
                      rbuf, 64, MPI_INTEGER, mod(rank + nranks - 1, nranks), 3, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) print '(A)', 'mpi_sample_f08 done'
    call MPI_Finalize()
end program mpi_sample_f08
