! check_colls_mpi: MPI collectives through the 'use mpi' binding, each
! compared with the PMPI reference.  The body is shared with
! check_colls_mpif.f90 (see check_colls_body.inc).
program check_colls_mpi
  use mpi
  implicit none
  character(len=*), parameter :: PROGNAME = 'check_colls_mpi'
  include 'check_colls_body.inc'
end program check_colls_mpi
