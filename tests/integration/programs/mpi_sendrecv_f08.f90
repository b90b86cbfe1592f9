! SPDX-License-Identifier: MIT
! MPI_Sendrecv and MPI_Sendrecv_replace through the Fortran 2008 binding (use mpi_f08), for
! tests/integration/mpi_sendrecv_test.cpp: a non-periodic shift on every rank (MPI_PROC_NULL at
! both ends), 5 iterations of one Sendrecv to the right (tag 1) and one Sendrecv_replace to the
! left (tag 2) of 512 doubles, with MPI_STATUS_IGNORE.
program sendrecv_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, lo, hi, it
  double precision :: a(512), b(512)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  lo = rank - 1
  hi = rank + 1
  if (rank == 0) lo = MPI_PROC_NULL
  if (rank == nranks - 1) hi = MPI_PROC_NULL
  a = rank
  do it = 1, 5
    call MPI_Sendrecv(a, 512, MPI_DOUBLE_PRECISION, hi, 1, b, 512, MPI_DOUBLE_PRECISION, lo, 1, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv_replace(a, 512, MPI_DOUBLE_PRECISION, lo, 2, hi, 2, MPI_COMM_WORLD, &
                              MPI_STATUS_IGNORE)
  end do
  call MPI_Finalize()
end program
