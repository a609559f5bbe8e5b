! check_nonblocking_mpi: the nonblocking collectives through the 'use mpi'
! binding, completed by every Fortran completion call.  The body is shared
! with check_nonblocking_mpif.f90 and check_nonblocking_f08.f90 (see
! check_nonblocking_body.inc).
program check_nonblocking_mpi
  use mpi
  implicit none
  character(len=*), parameter :: PROGNAME = 'check_nonblocking_mpi'
  integer, parameter :: NREQ = 20
  ! the handles of this binding (see check_nonblocking_body.inc)
  integer :: comms(2), shm, reqs(NREQ), dts(2), ops(2)
  include 'check_nonblocking_body.inc'
end program check_nonblocking_mpi
