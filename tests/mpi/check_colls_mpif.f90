! check_colls_mpif: MPI collectives through the legacy binding (include 'mpif.h'),
! each compared with the PMPI reference.  The body is shared with
! check_colls_mpi.f90 (see check_colls_body.inc).
program check_colls_mpif
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: PROGNAME = 'check_colls_mpif'
  include 'check_colls_body.inc'
end program check_colls_mpif
