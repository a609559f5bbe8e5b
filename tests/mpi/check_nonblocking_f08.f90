! check_nonblocking_f08: the nonblocking collectives through the mpi_f08
! binding (type(MPI_Request) and the other derived-type handles), completed
! by every Fortran completion call.  The body is shared with
! check_nonblocking_mpif.f90 and check_nonblocking_mpi.f90 (see
! check_nonblocking_body.inc).
program check_nonblocking_f08
  use mpi_f08
  implicit none
  character(len=*), parameter :: PROGNAME = 'check_nonblocking_f08'
  integer, parameter :: NREQ = 20
  ! the handles of this binding (see check_nonblocking_body.inc)
  type(MPI_Comm) :: comms(2), shm
  type(MPI_Request) :: reqs(NREQ)
  type(MPI_Datatype) :: dts(2)
  type(MPI_Op) :: ops(2)
  include 'check_nonblocking_body.inc'
end program check_nonblocking_f08
