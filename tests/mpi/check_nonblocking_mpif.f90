! check_nonblocking_mpif: the nonblocking collectives through the legacy
! binding (include 'mpif.h'), completed by every Fortran completion call.
! The body is shared with check_nonblocking_mpi.f90 and
! check_nonblocking_f08.f90 (see check_nonblocking_body.inc).
program check_nonblocking_mpif
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: PROGNAME = 'check_nonblocking_mpif'
  integer, parameter :: NREQ = 20
  ! the handles of this binding (see check_nonblocking_body.inc)
  integer :: comms(2), shm, reqs(NREQ), dts(2), ops(2)
  include 'check_nonblocking_body.inc'
end program check_nonblocking_mpif
