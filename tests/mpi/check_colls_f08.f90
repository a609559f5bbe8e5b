! check_colls_f08: MPI collectives through the mpi_f08 binding (derived-type
! handles, optional IERROR), each compared with the PMPI reference.
!
! Every check calls an intercepted MPI_Xxx routine and the reference
! PMPI_Xxx routine (not intercepted) with identical inputs and compares the
! results bit for bit.  The intercepted routines are called without IERROR
! in the MPI_IN_PLACE variants (and the MPI_BOTTOM broadcast, one barrier)
! and with IERROR otherwise.
!
! Same design as check_colls_body.inc (used by check_colls_mpif.f90 and
! check_colls_mpi.f90): every message buffer is a default-INTEGER "word"
! array holding the bytes of the elements (typed values are put in with
! TRANSFER), with NG guard words before and after the part MPI may touch.
! The whole array, guards and insignificant buffers (e.g. recvbuf of
! MPI_Reduce at a non-root) included, is compared, so stray writes are
! detected too.  Receive buffers start with random garbage (the same for MPI
! and PMPI).  Values are small integers, so floating-point sums and products
! are exact in any order of evaluation.
!
! The vector collectives (Allgatherv, Alltoallv, Gatherv, Scatterv,
! Reduce_scatter) run with per-rank counts that differ, including zeros, and
! with blocks in reverse rank order with gaps between them (the gaps start
! as garbage and are compared, so they must stay untouched); see vcheck.
program check_colls_f08
  use mpi_f08
  implicit none
  character(len=*), parameter :: PROGNAME = 'check_colls_f08'

  ! how element values are generated (one per Fortran element type)
  integer, parameter :: K_I4 = 1, K_I8 = 2, K_R4 = 3, K_R8 = 4, K_C4 = 5, K_C8 = 6, &
                        K_LOG = 7, K_2I = 8, K_2R = 9, K_2D = 10, K_CHAR = 11
  ! operation classes
  integer, parameter :: O_SUM = 1, O_PROD = 2, O_MINMAX = 3, O_BIT = 4, O_LOGIC = 5, O_LOC = 6
  ! collectives
  integer, parameter :: C_ALLREDUCE = 1, C_BCAST = 2, C_SCATTER = 3, C_GATHER = 4, &
                        C_ALLTOALL = 5, C_REDUCE = 6, C_ALLGATHER = 7, C_RSB = 8, &
                        C_ALLGATHERV = 9, C_ALLTOALLV = 10, C_GATHERV = 11, C_SCATTERV = 12, &
                        C_RS = 13, C_SCAN = 14, C_EXSCAN = 15
  character(len=*), parameter :: CNAMES(15) = [character(len=25) :: 'MPI_Allreduce', &
       'MPI_Bcast', 'MPI_Scatter', 'MPI_Gather', 'MPI_Alltoall', 'MPI_Reduce', &
       'MPI_Allgather', 'MPI_Reduce_scatter_block', 'MPI_Allgatherv', 'MPI_Alltoallv', &
       'MPI_Gatherv', 'MPI_Scatterv', 'MPI_Reduce_scatter', 'MPI_Scan', 'MPI_Exscan']
  ! datatype table (indices) and operation table (indices)
  integer, parameter :: T_INTEGER = 1, T_INTEGER4 = 2, T_INTEGER8 = 3, T_REAL = 4, &
       T_REAL4 = 5, T_DOUBLE = 6, T_REAL8 = 7, T_COMPLEX = 8, T_DCOMPLEX = 9, &
       T_LOGICAL = 10, T_2INTEGER = 11, T_2REAL = 12, T_2DOUBLE = 13, T_CHARACTER = 14, NT = 14
  integer, parameter :: P_SUM = 1, P_PROD = 2, P_MIN = 3, P_MAX = 4, P_BAND = 5, &
       P_BOR = 6, P_BXOR = 7, P_LAND = 8, P_LOR = 9, P_LXOR = 10, P_MINLOC = 11, &
       P_MAXLOC = 12, NOPS = 12
  integer, parameter :: NG = 3                       ! guard words around each buffer
  ! counts (per process or block) on MPI_COMM_WORLD and on the split
  ! communicators; 7 and 1001 are odd and not divisible by 2, 3, 4
  integer, parameter :: COUNTS_WORLD(4) = [0, 1, 7, 1001], COUNTS_SPLIT(2) = [1, 1001]
  integer, parameter :: NBIG = 262144                ! 1 MiB of MPI_INTEGER
  ! the vector collectives: patterns of per-rank counts (vcount1, vcount2) and
  ! layouts of the blocks (vlayout)
  integer, parameter :: V_MIXED = 1, V_ZERO = 2, V_ONE = 3, V_LARGE = 4
  character(len=*), parameter :: VNAMES(4) = [character(len=5) :: 'mixed', 'zero', 'one', 'large']
  integer, parameter :: VMIXED(6) = [3, 0, 7, 1, 0, 5]
  integer, parameter :: L_PACKED = 1, L_REVGAPS = 2
  character(len=*), parameter :: LNAMES(2) = [character(len=13) :: 'packed', 'reversed+gaps']
  ! datatypes of the vector data movements; (datatype, op) pairs of
  ! MPI_Reduce_scatter, MPI_Scan and MPI_Exscan
  integer, parameter :: VTYPES(3) = [T_INTEGER, T_CHARACTER, T_2DOUBLE]
  integer, parameter :: VRED_T(7) = [T_INTEGER, T_REAL, T_DOUBLE, T_INTEGER8, T_2INTEGER, &
                                     T_2DOUBLE, T_DCOMPLEX]
  integer, parameter :: VRED_O(7) = [P_SUM, P_SUM, P_SUM, P_BXOR, P_MINLOC, P_MAXLOC, P_PROD]
  integer, parameter :: MAXPRINT = 20                ! failure messages per rank

  type(MPI_Datatype) :: tdt(NT)                      ! handle
  integer :: tkind(NT), tsize(NT)                    ! value kind, bytes per element
  character(len=24) :: tname(NT)
  type(MPI_Op) :: ohandle(NOPS)
  integer :: oclass(NOPS)
  character(len=10) :: oname(NOPS)
  integer :: npass = 0, nfail = 0, wrank, wsize, ierr, ic
  integer(8) :: rng_state
  integer :: ign_flip = 0                            ! alternates the ignored in-place arguments
  type(MPI_Comm) :: comms(3)
  integer :: totals(2), mine(2)
  character(len=8) :: commnames(3) = [character(len=8) :: 'world', 'halves', 'reversed']

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank)
  call MPI_Comm_size(MPI_COMM_WORLD, wsize)
  call seed_rng(wrank)
  call setup_tables()

  ! MPI_COMM_WORLD; two halves; all ranks in reversed order (key = size - rank)
  comms(1) = MPI_COMM_WORLD
  call MPI_Comm_split(MPI_COMM_WORLD, (2*wrank)/wsize, wrank, comms(2))
  call MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, comms(3))

  do ic = 1, 3
     if (ic == 1) then
        call reduction_checks(comms(ic), trim(commnames(ic)), COUNTS_WORLD)
        call movement_checks(comms(ic), trim(commnames(ic)), COUNTS_WORLD)
        call vector_checks(comms(ic), trim(commnames(ic)), COUNTS_WORLD)
     else
        call reduction_checks(comms(ic), trim(commnames(ic)), COUNTS_SPLIT)
        call movement_checks(comms(ic), trim(commnames(ic)), COUNTS_SPLIT)
        call vector_checks(comms(ic), trim(commnames(ic)), COUNTS_SPLIT)
     end if
     call bottom_bcast_check(comms(ic), trim(commnames(ic)))
     call barrier_check(comms(ic), trim(commnames(ic)))
  end do
  call large_checks(comms(1), trim(commnames(1)))

  mine = [npass, nfail]
  call PMPI_Allreduce(mine, totals, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (wrank == 0) write (*, '(a, ": ", i0, " passed, ", i0, " failed")') PROGNAME, totals
  call MPI_Comm_free(comms(2))
  call MPI_Comm_free(comms(3))
  call MPI_Finalize()
  if (totals(2) /= 0) call exit(1)

contains

  subroutine setup_tables()
    call deftype(T_INTEGER,   MPI_INTEGER,            K_I4,   4, 'MPI_INTEGER')
    call deftype(T_INTEGER4,  MPI_INTEGER4,           K_I4,   4, 'MPI_INTEGER4')
    call deftype(T_INTEGER8,  MPI_INTEGER8,           K_I8,   8, 'MPI_INTEGER8')
    call deftype(T_REAL,      MPI_REAL,               K_R4,   4, 'MPI_REAL')
    call deftype(T_REAL4,     MPI_REAL4,              K_R4,   4, 'MPI_REAL4')
    call deftype(T_DOUBLE,    MPI_DOUBLE_PRECISION,   K_R8,   8, 'MPI_DOUBLE_PRECISION')
    call deftype(T_REAL8,     MPI_REAL8,              K_R8,   8, 'MPI_REAL8')
    call deftype(T_COMPLEX,   MPI_COMPLEX,            K_C4,   8, 'MPI_COMPLEX')
    call deftype(T_DCOMPLEX,  MPI_DOUBLE_COMPLEX,     K_C8,  16, 'MPI_DOUBLE_COMPLEX')
    call deftype(T_LOGICAL,   MPI_LOGICAL,            K_LOG,  4, 'MPI_LOGICAL')
    call deftype(T_2INTEGER,  MPI_2INTEGER,           K_2I,   8, 'MPI_2INTEGER')
    call deftype(T_2REAL,     MPI_2REAL,              K_2R,   8, 'MPI_2REAL')
    call deftype(T_2DOUBLE,   MPI_2DOUBLE_PRECISION,  K_2D,  16, 'MPI_2DOUBLE_PRECISION')
    call deftype(T_CHARACTER, MPI_CHARACTER,          K_CHAR, 1, 'MPI_CHARACTER')
    call defop(P_SUM,    MPI_SUM,    O_SUM,    'MPI_SUM')
    call defop(P_PROD,   MPI_PROD,   O_PROD,   'MPI_PROD')
    call defop(P_MIN,    MPI_MIN,    O_MINMAX, 'MPI_MIN')
    call defop(P_MAX,    MPI_MAX,    O_MINMAX, 'MPI_MAX')
    call defop(P_BAND,   MPI_BAND,   O_BIT,    'MPI_BAND')
    call defop(P_BOR,    MPI_BOR,    O_BIT,    'MPI_BOR')
    call defop(P_BXOR,   MPI_BXOR,   O_BIT,    'MPI_BXOR')
    call defop(P_LAND,   MPI_LAND,   O_LOGIC,  'MPI_LAND')
    call defop(P_LOR,    MPI_LOR,    O_LOGIC,  'MPI_LOR')
    call defop(P_LXOR,   MPI_LXOR,   O_LOGIC,  'MPI_LXOR')
    call defop(P_MINLOC, MPI_MINLOC, O_LOC,    'MPI_MINLOC')
    call defop(P_MAXLOC, MPI_MAXLOC, O_LOC,    'MPI_MAXLOC')
  end subroutine setup_tables

  subroutine deftype(i, handle, kind, bytes, name)
    integer, intent(in) :: i, kind, bytes
    type(MPI_Datatype), intent(in) :: handle
    character(len=*), intent(in) :: name
    integer :: sz
    tdt(i) = handle; tkind(i) = kind; tsize(i) = bytes; tname(i) = name
    call MPI_Type_size(handle, sz)
    if (sz /= bytes) then       ! would break the buffer sizes of this program
       write (*, '(a, ": size of ", a, " is ", i0)') PROGNAME, name, sz
       call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
  end subroutine deftype

  subroutine defop(i, handle, cls, name)
    integer, intent(in) :: i, cls
    type(MPI_Op), intent(in) :: handle
    character(len=*), intent(in) :: name
    ohandle(i) = handle; oclass(i) = cls; oname(i) = name
  end subroutine defop

  ! Is operation class cls defined for element kind k?
  logical function op_valid(k, cls)
    integer, intent(in) :: k, cls
    select case (k)
    case (K_I4, K_I8); op_valid = any(cls == [O_SUM, O_PROD, O_MINMAX, O_BIT])
    case (K_R4, K_R8); op_valid = any(cls == [O_SUM, O_PROD, O_MINMAX])
    case (K_C4, K_C8); op_valid = any(cls == [O_SUM, O_PROD])
    case (K_LOG);      op_valid = cls == O_LOGIC
    case (K_2I, K_2R, K_2D); op_valid = cls == O_LOC
    case default;      op_valid = .false.
    end select
  end function op_valid

  ! ---------------------------------------------------------------- checks

  ! Allreduce, Reduce (every root) and Reduce_scatter_block for every valid
  ! (datatype, op) pair and count, with and without MPI_IN_PLACE.
  subroutine reduction_checks(comm, cn, counts)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: counts(:)
    character(len=*), intent(in) :: cn
    integer :: it, io, ic, ip, root, p
    call MPI_Comm_size(comm, p)
    do it = 1, NT
       do io = 1, NOPS
          if (.not. op_valid(tkind(it), oclass(io))) cycle
          ! the aliases INTEGER4, REAL4, REAL8 only with MPI_SUM
          if (any(it == [T_INTEGER4, T_REAL4, T_REAL8]) .and. io /= P_SUM) cycle
          do ic = 1, size(counts)
             do ip = 0, 1
                call check(C_ALLREDUCE, it, io, counts(ic), 0, ip == 1, comm, cn)
                do root = 0, p - 1
                   call check(C_REDUCE, it, io, counts(ic), root, ip == 1, comm, cn)
                end do
                call check(C_RSB, it, io, counts(ic), 0, ip == 1, comm, cn)
             end do
          end do
       end do
    end do
  end subroutine reduction_checks

  ! Bcast, Scatter, Gather (every root), Allgather and Alltoall for every
  ! datatype and count, with and without MPI_IN_PLACE.
  subroutine movement_checks(comm, cn, counts)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: counts(:)
    character(len=*), intent(in) :: cn
    integer :: it, ic, ip, root, p
    call MPI_Comm_size(comm, p)
    do it = 1, NT
       do ic = 1, size(counts)
          do root = 0, p - 1
             call check(C_BCAST, it, 0, counts(ic), root, .false., comm, cn)
          end do
          do ip = 0, 1
             do root = 0, p - 1
                call check(C_SCATTER, it, 0, counts(ic), root, ip == 1, comm, cn)
                call check(C_GATHER, it, 0, counts(ic), root, ip == 1, comm, cn)
             end do
             call check(C_ALLGATHER, it, 0, counts(ic), 0, ip == 1, comm, cn)
             call check(C_ALLTOALL, it, 0, counts(ic), 0, ip == 1, comm, cn)
          end do
       end do
    end do
  end subroutine movement_checks

  ! Allgatherv, Alltoallv, Gatherv and Scatterv (every root) for a few
  ! datatypes, Reduce_scatter for a few (datatype, op) pairs, each with every
  ! counts pattern (counts that differ and are zero on some ranks; zero on all
  ! ranks; nonzero on one rank only) and, where there are displacements, both
  ! layouts (packed in rank order; reverse rank order with gaps); Scan and
  ! Exscan for the same pairs and every count; all with and without
  ! MPI_IN_PLACE.
  subroutine vector_checks(comm, cn, counts)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: counts(:)
    character(len=*), intent(in) :: cn
    integer :: iv, pat, lay, ip, root, ir, ic, p
    call MPI_Comm_size(comm, p)
    do iv = 1, size(VTYPES)
       do pat = V_MIXED, V_ONE
          do lay = L_PACKED, L_REVGAPS
             do ip = 0, 1
                call vcheck(C_ALLGATHERV, VTYPES(iv), 0, pat, lay, 0, ip == 1, comm, cn)
                call vcheck(C_ALLTOALLV, VTYPES(iv), 0, pat, lay, 0, ip == 1, comm, cn)
                do root = 0, p - 1
                   call vcheck(C_GATHERV, VTYPES(iv), 0, pat, lay, root, ip == 1, comm, cn)
                   call vcheck(C_SCATTERV, VTYPES(iv), 0, pat, lay, root, ip == 1, comm, cn)
                end do
             end do
          end do
       end do
    end do
    do ir = 1, size(VRED_T)
       do ip = 0, 1
          do pat = V_MIXED, V_ONE
             call vcheck(C_RS, VRED_T(ir), VRED_O(ir), pat, L_PACKED, 0, ip == 1, comm, cn)
          end do
          do ic = 1, size(counts)
             call check(C_SCAN, VRED_T(ir), VRED_O(ir), counts(ic), 0, ip == 1, comm, cn)
             call check(C_EXSCAN, VRED_T(ir), VRED_O(ir), counts(ic), 0, ip == 1, comm, cn)
          end do
       end do
    end do
  end subroutine vector_checks

  ! A few checks with about 1 MiB of data (count NBIG of 4-byte elements).
  subroutine large_checks(comm, cn)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: cn
    integer :: p
    call MPI_Comm_size(comm, p)
    call check(C_ALLREDUCE, T_INTEGER,   P_SUM,  NBIG,     0, .false., comm, cn)
    call check(C_ALLREDUCE, T_INTEGER,   P_SUM,  NBIG,     0, .true.,  comm, cn)
    call check(C_ALLREDUCE, T_DOUBLE,    P_MAX,  NBIG/2,   0, .true.,  comm, cn)
    call check(C_ALLREDUCE, T_INTEGER8,  P_BXOR, NBIG/2,   0, .false., comm, cn)
    call check(C_ALLREDUCE, T_DCOMPLEX,  P_SUM,  NBIG/4,   0, .true.,  comm, cn)
    call check(C_ALLREDUCE, T_LOGICAL,   P_LXOR, NBIG,     0, .false., comm, cn)
    call check(C_REDUCE,    T_INTEGER,   P_SUM,  NBIG,     0, .true.,  comm, cn)
    call check(C_REDUCE,    T_REAL,      P_MIN,  NBIG,   p-1, .false., comm, cn)
    call check(C_RSB,       T_INTEGER,   P_SUM,  NBIG/p,   0, .true.,  comm, cn)
    call check(C_RSB,       T_REAL,      P_PROD, NBIG/p,   0, .false., comm, cn)
    call check(C_BCAST,     T_INTEGER,   0,      NBIG,     0, .false., comm, cn)
    call check(C_BCAST,     T_CHARACTER, 0,      4*NBIG, p-1, .false., comm, cn)
    call check(C_SCATTER,   T_INTEGER,   0,      NBIG/p, p-1, .true.,  comm, cn)
    call check(C_GATHER,    T_INTEGER,   0,      NBIG/p,   0, .true.,  comm, cn)
    call check(C_ALLGATHER, T_INTEGER,   0,      NBIG/p,   0, .true.,  comm, cn)
    call check(C_ALLTOALL,  T_INTEGER,   0,      NBIG/p,   0, .true.,  comm, cn)
    call check(C_ALLTOALL,  T_INTEGER,   0,      NBIG/p,   0, .false., comm, cn)
    call vcheck(C_ALLGATHERV, T_INTEGER, 0,      V_LARGE, L_REVGAPS, 0,   .true.,  comm, cn)
    call vcheck(C_ALLTOALLV,  T_INTEGER, 0,      V_LARGE, L_REVGAPS, 0,   .false., comm, cn)
    call vcheck(C_GATHERV,    T_INTEGER, 0,      V_LARGE, L_PACKED,  p-1, .true.,  comm, cn)
    call vcheck(C_SCATTERV,   T_INTEGER, 0,      V_LARGE, L_REVGAPS, 0,   .false., comm, cn)
    call vcheck(C_RS,         T_INTEGER, P_SUM,  V_LARGE, L_PACKED,  0,   .true.,  comm, cn)
    call check(C_SCAN,        T_INTEGER, P_SUM,  NBIG,     0, .false., comm, cn)
    call check(C_EXSCAN,      T_DOUBLE,  P_SUM,  NBIG/2,   0, .true.,  comm, cn)
  end subroutine large_checks

  ! One check: coll on comm with datatype table entry it, op table entry io
  ! (reductions only), count n (per process / per block), root (rooted
  ! collectives), inplace: use MPI_IN_PLACE where the collective allows it
  ! (for rooted collectives only at the root).
  subroutine check(coll, it, io, n, root, inplace, comm, cn)
    integer, intent(in) :: coll, it, io, n, root
    type(MPI_Comm), intent(in) :: comm
    logical, intent(in) :: inplace
    character(len=*), intent(in) :: cn
    integer, allocatable :: st(:), sr(:), rt(:), rr(:)   ! send/recv, test/reference
    integer :: p, me, ns, nr, nws, nwr, ierr1, ierr2, ign_n
    type(MPI_Datatype) :: dt, ign_dt
    type(MPI_Op) :: op
    logical :: red, rooted, inp
    character(len=200) :: label

    call MPI_Comm_size(comm, p)
    call MPI_Comm_rank(comm, me)
    dt = tdt(it)
    red = any(coll == [C_ALLREDUCE, C_REDUCE, C_RSB, C_SCAN, C_EXSCAN])
    rooted = any(coll == [C_BCAST, C_SCATTER, C_GATHER, C_REDUCE])
    op = MPI_OP_NULL
    if (red) op = ohandle(io)
    inp = inplace .and. (me == root .or. .not. rooted)
    ! arguments that MPI ignores with MPI_IN_PLACE: alternate between the
    ! matching values and (0, MPI_DATATYPE_NULL)
    ign_flip = 1 - ign_flip
    ign_n = n; ign_dt = dt
    if (ign_flip == 1) then
       ign_n = 0; ign_dt = MPI_DATATYPE_NULL
    end if

    ! number of elements in the send and the receive buffer on this rank
    select case (coll)
    case (C_ALLREDUCE, C_REDUCE, C_SCAN, C_EXSCAN); ns = n; nr = n
    case (C_RSB);                 ns = n * p; nr = n
       if (inp) nr = n * p
    case (C_BCAST);               ns = 0;     nr = n
    case (C_SCATTER);             ns = n * p; nr = n
    case (C_GATHER, C_ALLGATHER); ns = n;     nr = n * p
    case default;                 ns = n * p; nr = n * p     ! C_ALLTOALL
    end select
    nws = (ns * tsize(it) + 3) / 4
    nwr = (nr * tsize(it) + 3) / 4
    allocate (st(nws + 2*NG), rt(nwr + 2*NG))
    call random_words(st)
    call random_words(rt)
    if (red) then                     ! reductions need values valid for the op
       if (inp) then
          rt(NG+1:NG+nwr) = gen(tkind(it), oclass(io), nr)
       else
          st(NG+1:NG+nws) = gen(tkind(it), oclass(io), ns)
       end if
    end if
    sr = st
    rr = rt

    ! the intercepted routine is called without IERROR in the in-place variants
    ierr1 = MPI_SUCCESS
    select case (coll)
    case (C_ALLREDUCE)
       if (inp) then
          call MPI_Allreduce(MPI_IN_PLACE, rt(NG+1:), n, dt, op, comm)
          call PMPI_Allreduce(MPI_IN_PLACE, rr(NG+1:), n, dt, op, comm, ierr2)
       else
          call MPI_Allreduce(st(NG+1:), rt(NG+1:), n, dt, op, comm, ierr1)
          call PMPI_Allreduce(sr(NG+1:), rr(NG+1:), n, dt, op, comm, ierr2)
       end if
    case (C_REDUCE)
       if (inp) then
          call MPI_Reduce(MPI_IN_PLACE, rt(NG+1:), n, dt, op, root, comm)
          call PMPI_Reduce(MPI_IN_PLACE, rr(NG+1:), n, dt, op, root, comm, ierr2)
       else
          call MPI_Reduce(st(NG+1:), rt(NG+1:), n, dt, op, root, comm, ierr1)
          call PMPI_Reduce(sr(NG+1:), rr(NG+1:), n, dt, op, root, comm, ierr2)
       end if
    case (C_RSB)
       if (inp) then
          call MPI_Reduce_scatter_block(MPI_IN_PLACE, rt(NG+1:), n, dt, op, comm)
          call PMPI_Reduce_scatter_block(MPI_IN_PLACE, rr(NG+1:), n, dt, op, comm, ierr2)
       else
          call MPI_Reduce_scatter_block(st(NG+1:), rt(NG+1:), n, dt, op, comm, ierr1)
          call PMPI_Reduce_scatter_block(sr(NG+1:), rr(NG+1:), n, dt, op, comm, ierr2)
       end if
    case (C_BCAST)
       call MPI_Bcast(rt(NG+1:), n, dt, root, comm, ierr1)
       call PMPI_Bcast(rr(NG+1:), n, dt, root, comm, ierr2)
    case (C_SCATTER)
       if (inp) then
          call MPI_Scatter(st(NG+1:), n, dt, MPI_IN_PLACE, ign_n, ign_dt, root, comm)
          call PMPI_Scatter(sr(NG+1:), n, dt, MPI_IN_PLACE, ign_n, ign_dt, root, comm, ierr2)
       else
          call MPI_Scatter(st(NG+1:), n, dt, rt(NG+1:), n, dt, root, comm, ierr1)
          call PMPI_Scatter(sr(NG+1:), n, dt, rr(NG+1:), n, dt, root, comm, ierr2)
       end if
    case (C_GATHER)
       if (inp) then
          call MPI_Gather(MPI_IN_PLACE, ign_n, ign_dt, rt(NG+1:), n, dt, root, comm)
          call PMPI_Gather(MPI_IN_PLACE, ign_n, ign_dt, rr(NG+1:), n, dt, root, comm, ierr2)
       else
          call MPI_Gather(st(NG+1:), n, dt, rt(NG+1:), n, dt, root, comm, ierr1)
          call PMPI_Gather(sr(NG+1:), n, dt, rr(NG+1:), n, dt, root, comm, ierr2)
       end if
    case (C_ALLGATHER)
       if (inp) then
          call MPI_Allgather(MPI_IN_PLACE, ign_n, ign_dt, rt(NG+1:), n, dt, comm)
          call PMPI_Allgather(MPI_IN_PLACE, ign_n, ign_dt, rr(NG+1:), n, dt, comm, ierr2)
       else
          call MPI_Allgather(st(NG+1:), n, dt, rt(NG+1:), n, dt, comm, ierr1)
          call PMPI_Allgather(sr(NG+1:), n, dt, rr(NG+1:), n, dt, comm, ierr2)
       end if
    case (C_ALLTOALL)
       if (inp) then
          call MPI_Alltoall(MPI_IN_PLACE, ign_n, ign_dt, rt(NG+1:), n, dt, comm)
          call PMPI_Alltoall(MPI_IN_PLACE, ign_n, ign_dt, rr(NG+1:), n, dt, comm, ierr2)
       else
          call MPI_Alltoall(st(NG+1:), n, dt, rt(NG+1:), n, dt, comm, ierr1)
          call PMPI_Alltoall(sr(NG+1:), n, dt, rr(NG+1:), n, dt, comm, ierr2)
       end if
    ! MPI_Exscan leaves the receive buffer of rank 0 undefined; Open MPI 4.1
    ! does not touch it, and neither may Overpass (programs that preset it
    ! would see a change), so it is compared like the rest
    case (C_SCAN)
       if (inp) then
          call MPI_Scan(MPI_IN_PLACE, rt(NG+1:), n, dt, op, comm)
          call PMPI_Scan(MPI_IN_PLACE, rr(NG+1:), n, dt, op, comm, ierr2)
       else
          call MPI_Scan(st(NG+1:), rt(NG+1:), n, dt, op, comm, ierr1)
          call PMPI_Scan(sr(NG+1:), rr(NG+1:), n, dt, op, comm, ierr2)
       end if
    case (C_EXSCAN)
       if (inp) then
          call MPI_Exscan(MPI_IN_PLACE, rt(NG+1:), n, dt, op, comm)
          call PMPI_Exscan(MPI_IN_PLACE, rr(NG+1:), n, dt, op, comm, ierr2)
       else
          call MPI_Exscan(st(NG+1:), rt(NG+1:), n, dt, op, comm, ierr1)
          call PMPI_Exscan(sr(NG+1:), rr(NG+1:), n, dt, op, comm, ierr2)
       end if
    end select
    ! in-place reduce-scatter: MPI defines only the first n elements of the
    ! receive buffer afterwards (the rest may serve as scratch space)
    if (coll == C_RSB .and. inp) then
       rt(NG + (n * tsize(it) + 3) / 4 + 1 : NG + nwr) = 0
       rr(NG + (n * tsize(it) + 3) / 4 + 1 : NG + nwr) = 0
    end if

    ! floating-point results compare by value: the sign of a zero (0 * -1 = -0) depends on the
    ! order of the reduction, which MPI leaves open; with the integer-valued data used here the
    ! word 80000000 (hex) only occurs as (the high word of) a negative zero
    if (red .and. any(tkind(it) == [K_R4, K_R8, K_C4, K_C8])) then
       where (rt == -huge(0) - 1) rt = 0
       where (rr == -huge(0) - 1) rr = 0
    end if
    if (ierr1 == MPI_SUCCESS .and. ierr2 == MPI_SUCCESS .and. all(st == sr) .and. all(rt == rr)) then
       npass = npass + 1
    else
       if (red) then
          write (label, '(a, 1x, a, " op=", a)') trim(CNAMES(coll)), trim(tname(it)), trim(oname(io))
       else
          write (label, '(a, 1x, a)') trim(CNAMES(coll)), trim(tname(it))
       end if
       write (label, '(a, " comm=", a, " count=", i0)') trim(label), cn, n
       if (rooted) write (label, '(a, " root=", i0)') trim(label), root
       write (label, '(a, " in_place=", l1)') trim(label), inp
       call report_failure(label, ierr1, ierr2, st, sr, rt, rr)
    end if
  end subroutine check

  ! One check of a vector collective (Allgatherv, Alltoallv, Gatherv,
  ! Scatterv, Reduce_scatter) on comm with datatype table entry it, op table
  ! entry io (Reduce_scatter only), counts pattern pat, layout lay of the
  ! blocks in the buffer with displacements (Alltoallv: the receive buffer;
  ! its send buffer takes the other layout), root (Gatherv, Scatterv),
  ! inplace as in check.  The gaps between blocks start with garbage like the
  ! rest of the buffer and are compared too, so they must stay untouched.
  ! Arguments that are not significant (counts, displacements and datatype on
  ! the side that a non-root does not use; what MPI_IN_PLACE makes MPI
  ! ignore) alternate between the meaningful values and nonsense (-1,
  ! MPI_DATATYPE_NULL).
  subroutine vcheck(coll, it, io, pat, lay, root, inplace, comm, cn)
    integer, intent(in) :: coll, it, io, pat, lay, root
    type(MPI_Comm), intent(in) :: comm
    logical, intent(in) :: inplace
    character(len=*), intent(in) :: cn
    integer, allocatable :: st(:), sr(:), rt(:), rr(:)   ! send/recv, test/reference
    integer, allocatable :: sc(:), sd(:), rc(:), rd(:)   ! counts, displacements
    integer :: p, me, r, ns, nr, nws, nwr, nown, ierr1, ierr2
    type(MPI_Datatype) :: dt, sdt, rdt
    type(MPI_Op) :: op
    logical :: red, rooted, inp
    character(len=200) :: label

    call MPI_Comm_size(comm, p)
    call MPI_Comm_rank(comm, me)
    dt = tdt(it)
    red = coll == C_RS
    rooted = any(coll == [C_GATHERV, C_SCATTERV])
    op = MPI_OP_NULL
    if (red) op = ohandle(io)
    inp = inplace .and. (me == root .or. .not. rooted)

    ! counts and displacements (elements); ns, nr: the elements that the send
    ! and the receive buffer span on this rank
    allocate (sc(p), sd(p), rc(p), rd(p))
    sc = 0; sd = 0; rc = 0; rd = 0
    select case (coll)
    case (C_ALLGATHERV, C_GATHERV)
       rc = [(vcount1(pat, r, p), r = 0, p - 1)]
       call vlayout(rc, lay, rd, nr)
       ns = rc(me + 1); sc(1) = ns
    case (C_SCATTERV)
       sc = [(vcount1(pat, r, p), r = 0, p - 1)]
       call vlayout(sc, lay, sd, ns)
       nr = sc(me + 1); rc(1) = nr
    case (C_ALLTOALLV)                ! in place: what i sends j, j sends i
       sc = [(vcount2(pat, me, r, p, inplace), r = 0, p - 1)]
       rc = [(vcount2(pat, r, me, p, inplace), r = 0, p - 1)]
       call vlayout(sc, 3 - lay, sd, ns)
       call vlayout(rc, lay, rd, nr)
    case default                      ! C_RS: the whole vector in, one block out
       rc = [(vcount1(pat, r, p), r = 0, p - 1)]
       ns = sum(rc); nr = rc(me + 1)
       if (inp) nr = ns
    end select
    nown = rc(me + 1)

    sdt = dt; rdt = dt
    ign_flip = 1 - ign_flip
    if (ign_flip == 1) then
       select case (coll)
       case (C_ALLGATHERV)
          if (inp) then
             sc(1) = 0; sdt = MPI_DATATYPE_NULL
          end if
       case (C_ALLTOALLV)
          if (inp) then
             sc = -1; sd = -1; sdt = MPI_DATATYPE_NULL
          end if
       case (C_GATHERV)
          if (inp) then
             sc(1) = 0; sdt = MPI_DATATYPE_NULL
          else if (me /= root) then
             rc = -1; rd = -1; rdt = MPI_DATATYPE_NULL
          end if
       case (C_SCATTERV)
          if (inp) then
             rc(1) = 0; rdt = MPI_DATATYPE_NULL
          else if (me /= root) then
             sc = -1; sd = -1; sdt = MPI_DATATYPE_NULL
          end if
       end select
    end if

    nws = (ns * tsize(it) + 3) / 4
    nwr = (nr * tsize(it) + 3) / 4
    allocate (st(nws + 2*NG), rt(nwr + 2*NG))
    call random_words(st)
    call random_words(rt)
    if (red) then                     ! reductions need values valid for the op
       if (inp) then
          rt(NG+1:NG+nwr) = gen(tkind(it), oclass(io), nr)
       else
          st(NG+1:NG+nws) = gen(tkind(it), oclass(io), ns)
       end if
    end if
    sr = st
    rr = rt

    ! the intercepted routine is called without IERROR in the in-place variants
    ierr1 = MPI_SUCCESS
    select case (coll)
    case (C_ALLGATHERV)
       if (inp) then
          call MPI_Allgatherv(MPI_IN_PLACE, sc(1), sdt, rt(NG+1:), rc, rd, rdt, comm)
          call PMPI_Allgatherv(MPI_IN_PLACE, sc(1), sdt, rr(NG+1:), rc, rd, rdt, comm, ierr2)
       else
          call MPI_Allgatherv(st(NG+1:), sc(1), sdt, rt(NG+1:), rc, rd, rdt, comm, ierr1)
          call PMPI_Allgatherv(sr(NG+1:), sc(1), sdt, rr(NG+1:), rc, rd, rdt, comm, ierr2)
       end if
    case (C_ALLTOALLV)
       if (inp) then
          call MPI_Alltoallv(MPI_IN_PLACE, sc, sd, sdt, rt(NG+1:), rc, rd, rdt, comm)
          call PMPI_Alltoallv(MPI_IN_PLACE, sc, sd, sdt, rr(NG+1:), rc, rd, rdt, comm, ierr2)
       else
          call MPI_Alltoallv(st(NG+1:), sc, sd, sdt, rt(NG+1:), rc, rd, rdt, comm, ierr1)
          call PMPI_Alltoallv(sr(NG+1:), sc, sd, sdt, rr(NG+1:), rc, rd, rdt, comm, ierr2)
       end if
    case (C_GATHERV)
       if (inp) then
          call MPI_Gatherv(MPI_IN_PLACE, sc(1), sdt, rt(NG+1:), rc, rd, rdt, root, comm)
          call PMPI_Gatherv(MPI_IN_PLACE, sc(1), sdt, rr(NG+1:), rc, rd, rdt, root, comm, ierr2)
       else
          call MPI_Gatherv(st(NG+1:), sc(1), sdt, rt(NG+1:), rc, rd, rdt, root, comm, ierr1)
          call PMPI_Gatherv(sr(NG+1:), sc(1), sdt, rr(NG+1:), rc, rd, rdt, root, comm, ierr2)
       end if
    case (C_SCATTERV)
       if (inp) then
          call MPI_Scatterv(st(NG+1:), sc, sd, sdt, MPI_IN_PLACE, rc(1), rdt, root, comm)
          call PMPI_Scatterv(sr(NG+1:), sc, sd, sdt, MPI_IN_PLACE, rc(1), rdt, root, comm, ierr2)
       else
          call MPI_Scatterv(st(NG+1:), sc, sd, sdt, rt(NG+1:), rc(1), rdt, root, comm, ierr1)
          call PMPI_Scatterv(sr(NG+1:), sc, sd, sdt, rr(NG+1:), rc(1), rdt, root, comm, ierr2)
       end if
    case (C_RS)
       if (inp) then
          call MPI_Reduce_scatter(MPI_IN_PLACE, rt(NG+1:), rc, dt, op, comm)
          call PMPI_Reduce_scatter(MPI_IN_PLACE, rr(NG+1:), rc, dt, op, comm, ierr2)
       else
          call MPI_Reduce_scatter(st(NG+1:), rt(NG+1:), rc, dt, op, comm, ierr1)
          call PMPI_Reduce_scatter(sr(NG+1:), rr(NG+1:), rc, dt, op, comm, ierr2)
       end if
    end select
    ! in-place reduce-scatter: only this rank's block (at the start of the
    ! receive buffer) is defined afterwards
    if (coll == C_RS .and. inp) then
       rt(NG + (nown * tsize(it) + 3) / 4 + 1 : NG + nwr) = 0
       rr(NG + (nown * tsize(it) + 3) / 4 + 1 : NG + nwr) = 0
    end if
    ! floating-point results compare by value (see check)
    if (red .and. any(tkind(it) == [K_R4, K_R8, K_C4, K_C8])) then
       where (rt == -huge(0) - 1) rt = 0
       where (rr == -huge(0) - 1) rr = 0
    end if
    if (ierr1 == MPI_SUCCESS .and. ierr2 == MPI_SUCCESS .and. all(st == sr) .and. all(rt == rr)) then
       npass = npass + 1
    else
       if (red) then
          write (label, '(a, 1x, a, " op=", a)') trim(CNAMES(coll)), trim(tname(it)), trim(oname(io))
       else
          write (label, '(a, 1x, a)') trim(CNAMES(coll)), trim(tname(it))
       end if
       write (label, '(a, " comm=", a, " counts=", a)') trim(label), cn, trim(VNAMES(pat))
       if (.not. red) write (label, '(a, " layout=", a)') trim(label), trim(LNAMES(lay))
       if (rooted) write (label, '(a, " root=", i0)') trim(label), root
       write (label, '(a, " in_place=", l1)') trim(label), inp
       call report_failure(label, ierr1, ierr2, st, sr, rt, rr)
    end if
  end subroutine vcheck

  ! MPI_BCAST of MPI_BOTTOM with a struct datatype of absolute addresses.
  subroutine bottom_bcast_check(comm, cn)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: cn
    integer :: bt(40), br(40), p, ierr1, ierr2, k, root
    type(MPI_Datatype) :: tyt, tyr
    character(len=80) :: label
    call MPI_Comm_size(comm, p)
    do k = 0, 1
       root = k * (p - 1)
       call random_words(bt)
       bt(11:14) = gen(K_R8, O_SUM, 2)                 ! some real doubles
       br = bt
       call make_struct(bt, tyt)
       call make_struct(br, tyr)
       ierr1 = MPI_SUCCESS
       call MPI_Bcast(MPI_BOTTOM, 1, tyt, root, comm)          ! without IERROR
       call PMPI_Bcast(MPI_BOTTOM, 1, tyr, root, comm, ierr2)
       call MPI_F_sync_reg(bt)     ! bt, br were changed through MPI_BOTTOM
       call MPI_F_sync_reg(br)
       if (ierr1 == MPI_SUCCESS .and. ierr2 == MPI_SUCCESS .and. all(bt == br)) then
          npass = npass + 1
       else
          write (label, '("MPI_Bcast MPI_BOTTOM+struct comm=", a, " root=", i0)') cn, root
          call report_failure(label, ierr1, ierr2, bt, bt, bt, br)
       end if
       call MPI_Type_free(tyt)
       call MPI_Type_free(tyr)
    end do
  end subroutine bottom_bcast_check

  ! Struct type with absolute displacements of parts of w:
  ! 3 INTEGER at w(3), 2 DOUBLE PRECISION at w(11), 5 CHARACTER at w(20),
  ! 1 COMPLEX at w(25), 2 LOGICAL at w(31).
  subroutine make_struct(w, newtype)
    integer, intent(in) :: w(40)
    type(MPI_Datatype), intent(out) :: newtype
    type(MPI_Datatype) :: types(5)
    integer :: blens(5), where(5), i
    integer(kind=MPI_ADDRESS_KIND) :: disps(5)
    types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER, MPI_COMPLEX, MPI_LOGICAL]
    blens = [3, 2, 5, 1, 2]
    where = [3, 11, 20, 25, 31]
    do i = 1, 5
       call MPI_Get_address(w(where(i)), disps(i))
    end do
    call MPI_Type_create_struct(5, blens, disps, types, newtype)
    call MPI_Type_commit(newtype)
  end subroutine make_struct

  ! MPI_BARRIER: must return MPI_SUCCESS, and (when all ranks share a node
  ! and hence one monotonic clock) no rank may leave it before the last rank
  ! entered it.  One rank is delayed by 10 ms before entering.
  subroutine barrier_check(comm, cn)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: cn
    type(MPI_Comm) :: shm
    integer :: p, me, pshm, k, delayed, ierr1
    integer(8) :: t(2), rate, t0, now
    integer(8), allocatable :: tall(:, :)
    logical :: one_node, ok
    character(len=80) :: label
    call MPI_Comm_size(comm, p)
    call MPI_Comm_rank(comm, me)
    call MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm)
    call MPI_Comm_size(shm, pshm)
    call MPI_Comm_free(shm)
    one_node = pshm == p
    allocate (tall(2, p))
    do k = 0, 1
       delayed = k * (p - 1)
       call PMPI_Barrier(comm, ierr)
       if (me == delayed) then
          call system_clock(t0, rate)
          do
             call system_clock(now)
             if (now - t0 >= rate / 100) exit
          end do
       end if
       call system_clock(t(1))
       if (k == 0) then
          ierr1 = MPI_SUCCESS
          call MPI_Barrier(comm)                ! without IERROR
       else
          call MPI_Barrier(comm, ierr1)
       end if
       call system_clock(t(2))
       call PMPI_Allgather(t, 2, MPI_INTEGER8, tall, 2, MPI_INTEGER8, comm, ierr)
       ok = ierr1 == MPI_SUCCESS
       if (one_node) ok = ok .and. minval(tall(2, :)) >= maxval(tall(1, :))
       if (ok) then
          npass = npass + 1
       else
          nfail = nfail + 1
          write (label, '("MPI_Barrier comm=", a, " delayed rank=", i0)') cn, delayed
          if (nfail <= MAXPRINT) write (*, '("FAIL rank ", i0, ": ", a, " ierror=", i0, a)') &
               wrank, trim(label), ierr1, ' (a rank left before the last one entered?)'
       end if
    end do
  end subroutine barrier_check

  ! ---------------------------------------------------------------- helpers

  subroutine report_failure(label, ierr1, ierr2, st, sr, rt, rr)
    character(len=*), intent(in) :: label
    integer, intent(in) :: ierr1, ierr2, st(:), sr(:), rt(:), rr(:)
    integer :: k
    nfail = nfail + 1
    if (nfail > MAXPRINT) return
    if (ierr1 /= MPI_SUCCESS .or. ierr2 /= MPI_SUCCESS) then
       write (*, '("FAIL rank ", i0, ": ", a, ": ierror=", i0, " (PMPI: ", i0, ")")') &
            wrank, trim(label), ierr1, ierr2
    else if (any(rt /= rr)) then
       k = findloc(rt /= rr, .true., dim=1)
       write (*, '("FAIL rank ", i0, ": ", a, ": recvbuf word ", i0, " of ", i0, &
            & " (guard ", i0, "): got ", z8.8, " expected ", z8.8)') &
            wrank, trim(label), k - NG, size(rt) - 2*NG, NG, rt(k), rr(k)
    else
       k = findloc(st /= sr, .true., dim=1)
       write (*, '("FAIL rank ", i0, ": ", a, ": sendbuf word ", i0, " changed")') &
            wrank, trim(label), k - NG
    end if
  end subroutine report_failure

  ! A small xorshift64 generator (gfortran's RANDOM_NUMBER is slow for the
  ! 1 MiB buffers).  Every rank has its own stream.
  subroutine seed_rng(rank)
    integer, intent(in) :: rank
    integer :: i
    rng_state = 88172645463325252_8 + 1000003_8 * rank
    do i = 1, 20
       rng_state = next_random()
    end do
  end subroutine seed_rng

  integer(8) function next_random()
    rng_state = ieor(rng_state, ishft(rng_state, 13))
    rng_state = ieor(rng_state, ishft(rng_state, -7))
    rng_state = ieor(rng_state, ishft(rng_state, 17))
    next_random = rng_state
  end function next_random

  ! n random integers in [lo, hi]
  function rand_range(n, lo, hi) result(v)
    integer, intent(in) :: n
    integer(8), intent(in) :: lo, hi
    integer(8) :: v(n)
    integer :: i
    do i = 1, n       ! 53 random bits scaled to [0, 1)
       v(i) = lo + int(dble(ishft(next_random(), -11)) * 2d0**(-53) * dble(hi - lo + 1), 8)
    end do
  end function rand_range

  subroutine random_words(w)
    integer, intent(out) :: w(:)
    integer :: i
    do i = 1, size(w)
       w(i) = int(ibits(next_random(), 0, 32) - 2147483648_8)
    end do
  end subroutine random_words

  ! n values of a kind, suitable for operation class cls, as words.
  function gen(kind, cls, n) result(w)
    integer, intent(in) :: kind, cls, n
    integer, allocatable :: w(:)
    select case (kind)
    case (K_I4)
       w = int(values(cls, n, .false.))
    case (K_I8)
       w = transfer(values(cls, n, .true.), 0, 2*n)
    case (K_R4)
       w = transfer(real(values(cls, n, .false.)), 0, n)
    case (K_C4)                                ! COMPLEX = two REALs
       w = transfer(real(values(cls, 2*n, .false.)), 0, 2*n)
    case (K_R8)
       w = transfer(dble(values(cls, n, .false.)), 0, 2*n)
    case (K_C8)
       w = transfer(dble(values(cls, 2*n, .false.)), 0, 4*n)
    case (K_LOG)
       w = transfer(rand_range(n, 0_8, 1_8) == 1, 0, n)
    case (K_2I)
       w = int(loc_pairs(n))
    case (K_2R)
       w = transfer(real(loc_pairs(n)), 0, 2*n)
    case (K_2D)
       w = transfer(dble(loc_pairs(n)), 0, 4*n)
    case default                               ! K_CHAR: any bytes
       allocate (w((n + 3) / 4))
       call random_words(w)
    end select
  end function gen

  ! Random integer values for an op class; wide: use the 64-bit range.
  ! Small enough that products/sums over a few ranks are exact in REAL.
  function values(cls, n, wide) result(v)
    integer, intent(in) :: cls, n
    logical, intent(in) :: wide
    integer(8), allocatable :: v(:)
    select case (cls)
    case (O_PROD)
       if (wide) then
          v = rand_range(n, -3000_8, 3000_8)
       else
          v = rand_range(n, -3_8, 3_8)
       end if
    case (O_BIT)
       if (wide) then
          v = ior(ishft(rand_range(n, -2147483648_8, 2147483647_8), 32), &
                  rand_range(n, 0_8, 4294967295_8))
       else
          v = rand_range(n, -2147483648_8, 2147483647_8)
       end if
    case default                               ! O_SUM, O_MINMAX
       if (wide) then
          v = rand_range(n, -2_8**40, 2_8**40)
       else
          v = rand_range(n, -1000_8, 1000_8)
       end if
    end select
  end function values

  ! (value, index) pairs for MINLOC/MAXLOC, interleaved; few distinct values
  ! so that ties on the value are frequent.
  function loc_pairs(n) result(v)
    integer, intent(in) :: n
    integer(8) :: v(2*n)
    v(1::2) = rand_range(n, 0_8, 2_8)
    v(2::2) = rand_range(n, 0_8, 7_8)
  end function loc_pairs

  ! Count of rank r's block (of p) under counts pattern pat.
  integer function vcount1(pat, r, p)
    integer, intent(in) :: pat, r, p
    select case (pat)
    case (V_MIXED); vcount1 = VMIXED(mod(r, 6) + 1)
    case (V_ZERO);  vcount1 = 0
    case (V_ONE);   vcount1 = merge(1001, 0, r == p - 1)
    case default;   vcount1 = (NBIG / p) * (2 + mod(r, 2)) / 3      ! V_LARGE
    end select
  end function vcount1

  ! Count of the block that rank i sends rank j (Alltoallv) under pattern
  ! pat; sym: the same as the block j sends i.
  integer function vcount2(pat, i, j, p, sym)
    integer, intent(in) :: pat, i, j, p
    logical, intent(in) :: sym
    integer :: k
    k = i + j
    if (.not. sym) k = k + i
    select case (pat)
    case (V_MIXED); vcount2 = VMIXED(mod(k, 6) + 1)
    case (V_ZERO);  vcount2 = 0
    case (V_ONE)
       vcount2 = merge(1001, 0, (sym .and. k == p - 1) .or. &
                                (.not. sym .and. i == p - 1 .and. j == 0))
    case default;   vcount2 = (NBIG / (p * p)) * (2 + mod(k, 2)) / 3 ! V_LARGE
    end select
  end function vcount2

  ! Displacements dis (elements) of blocks of counts cnt (one per rank):
  ! L_PACKED: in rank order without gaps; L_REVGAPS: in reverse rank order,
  ! a gap of 1 to 3 elements before each block and 2 after the last.
  ! ext: the elements the buffer spans.
  subroutine vlayout(cnt, lay, dis, ext)
    integer, intent(in) :: cnt(:), lay
    integer, intent(out) :: dis(:), ext
    integer :: r
    ext = 0
    if (lay == L_PACKED) then
       do r = 1, size(cnt)
          dis(r) = ext
          ext = ext + cnt(r)
       end do
    else
       do r = size(cnt), 1, -1
          ext = ext + 1 + mod(r, 3)
          dis(r) = ext
          ext = ext + cnt(r)
       end do
       ext = ext + 2
    end if
  end subroutine vlayout
end program check_colls_f08
