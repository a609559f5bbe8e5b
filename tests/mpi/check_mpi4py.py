#!/usr/bin/python3
"""check_mpi4py: MPI collectives called through mpi4py (MPI_THREAD_MULTIPLE).

Run: mpirun -np N /usr/bin/python3 tests/mpi/check_mpi4py.py

Every rank's input for a check comes from a numpy Generator seeded with
(check key, rank), so every rank can regenerate every other rank's input and
compute the expected result locally with numpy.  Values are small integers,
so floating-point sums and products are exact in any order; results are
compared exactly.  Buffers are views into larger arrays whose guard elements
on both sides must stay untouched; send buffers must stay unchanged.

Covered: Allreduce, Bcast, Scatter, Gather, Alltoall, Reduce, Allgather,
Reduce_scatter_block, Barrier on numpy arrays (int32, int64, float32,
float64, complex128; SUM, PROD, MIN, MAX), MPI.IN_PLACE where allowed, every
root, on COMM_WORLD, a split and a dup; counts 0, 1, 7, 1001 and ~1 MiB;
the pickle-based allreduce/bcast; collectives from two threads at once on
two dup'ed communicators.  Allgatherv, Alltoallv, Gatherv, Scatterv (every
root) and Reduce_scatter with per-rank counts that differ (zero on some
ranks), are zero everywhere, or nonzero on one rank only, and blocks packed
in rank order or in reverse rank order with gaps between them (the gaps
must stay untouched); Reduce_scatter, Scan and Exscan with a few (dtype, op)
pairs and a user-defined non-commutative op (composition of affine maps, on
a contiguous pair type); MPI.IN_PLACE as each call defines it; on
COMM_WORLD and the split (the dup has the same group as COMM_WORLD).

Prints from rank 0 exactly one final line "check_mpi4py: N passed, M failed"
(N, M summed over ranks; point-to-point is used for that, not collectives)
and exits non-zero if anything failed.
"""

import sys
import threading
import time

import numpy as np
from mpi4py import MPI

PROG = "check_mpi4py"
SEED = 20240611
G = 3                      # guard elements on each side of every buffer
MAXPRINT = 20              # failure messages per rank
COUNTS = (0, 1, 7, 1001)   # 7, 1001: odd, not divisible by 2, 3, 4
NBIG = 262144              # 1 MiB of int32

DTYPES = (np.int32, np.int64, np.float32, np.float64, np.complex128)
OPS = {"SUM": MPI.SUM, "PROD": MPI.PROD, "MIN": MPI.MIN, "MAX": MPI.MAX}

WORLD = MPI.COMM_WORLD


def _affine(invec, inoutvec, datatype):
    """The non-commutative AFFINE op: each element, a pair (a, b) of int64,
    stands for x -> a*x + b; inoutvec becomes the map "invec's, then
    inoutvec's" (invec holds the lower ranks' operand)."""
    u = np.frombuffer(invec, dtype=np.int64).reshape(-1, 2)
    v = np.frombuffer(inoutvec, dtype=np.int64).reshape(-1, 2)
    v[:, 1] = v[:, 0] * u[:, 1] + v[:, 1]
    v[:, 0] *= u[:, 0]


PAIR = MPI.INT64_T.Create_contiguous(2).Commit()   # AFFINE's element
AFFINE = MPI.Op.Create(_affine, commute=False)

# the vector collectives: patterns of per-rank counts (vcount1, vcount2),
# layouts of the blocks (vlayout), dtypes of the data movements, and the
# (dtype, op) pairs of Reduce_scatter, Scan and Exscan
V_MIXED, V_ZERO, V_ONE, V_LARGE = "mixed", "zero", "one", "large"
VMIXED = (3, 0, 7, 1, 0, 5)
PACKED, REVGAPS = "packed", "reversed+gaps"
VDTYPES = (np.int32, np.complex128)
VRED = ((np.int32, "SUM"), (np.float32, "SUM"), (np.float64, "SUM"),
        (np.int64, "MAX"), (np.complex128, "PROD"), (np.int64, "AFFINE"))
VOPS = dict(OPS, AFFINE=AFFINE)


class Tally:
    """Pass/fail counters, shared by threads."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.lock = threading.Lock()

    def record(self, ok, label, detail=""):
        with self.lock:
            if ok:
                self.passed += 1
                return
            self.failed += 1
            if self.failed <= MAXPRINT:
                print(f"FAIL rank {WORLD.rank}: {label}: {detail}", flush=True)


TALLY = Tally()


# ------------------------------------------------------------------ data

def op_valid(dtype, opname):
    return not (dtype == np.complex128 and opname in ("MIN", "MAX"))


def _ints(rng, dtype, opname, n):
    """Random integer values for dtype/op, small enough to stay exact."""
    wide = dtype == np.int64
    if opname == "PROD":
        lo, hi = (-3000, 3000) if wide else (-3, 3)
    elif opname in ("MIN", "MAX"):
        lo, hi = (-2**40, 2**40) if wide else (-10**6, 10**6)
    else:  # SUM, and plain data
        lo, hi = (-2**40, 2**40) if wide else (-1000, 1000)
    return rng.integers(lo, hi, size=n, endpoint=True)


def gen(key, rank, dtype, opname, n):
    """Input of `rank` for the check `key`: reproducible on every rank."""
    rng = np.random.default_rng([SEED, *key, rank])
    if dtype == np.complex128:
        re = _ints(rng, np.float64, opname, n)
        im = _ints(rng, np.float64, opname, n)
        return (re + 1j * im).astype(dtype)
    return _ints(rng, dtype, opname, n).astype(dtype)


# sub-keys (appended to a check key) for other random contents
K_GARBAGE, K_GUARD, K_SEND = 1, 2, 3


def garbage(key, dtype, n):
    """Initial receive-buffer contents: random, different on every rank."""
    return gen((*key, K_GARBAGE), WORLD.rank, dtype, "SUM", n)


def gen_red(key, rank, dtype, opname, n):
    """Like gen, for the ops of VOPS: n AFFINE elements are 2n int64."""
    if opname == "AFFINE":
        return gen(key, rank, np.int64, "PROD", 2 * n)
    return gen(key, rank, dtype, opname, n)


def width(opname):
    """numpy elements per MPI element"""
    return 2 if opname == "AFFINE" else 1


def message(buf, opname):
    return [buf, PAIR] if opname == "AFFINE" else buf


def reduce_expected(arrays, dtype, opname):
    if opname == "AFFINE":   # in rank order
        acc = arrays[0].reshape(-1, 2).copy()
        for a in arrays[1:]:
            v = a.reshape(-1, 2)
            acc[:, 1] = v[:, 0] * acc[:, 1] + v[:, 1]
            acc[:, 0] *= v[:, 0]
        return acc.reshape(-1)
    stack = np.stack(arrays)
    if opname == "SUM":
        return stack.sum(axis=0, dtype=dtype)
    if opname == "PROD":
        return stack.prod(axis=0, dtype=dtype)
    if opname == "MIN":
        return stack.min(axis=0)
    return stack.max(axis=0)


def vcount1(pat, r, p):
    """The count of rank r's block (of p) under counts pattern pat."""
    if pat == V_MIXED:
        return VMIXED[r % 6]
    if pat == V_ZERO:
        return 0
    if pat == V_ONE:
        return 1001 if r == p - 1 else 0
    return NBIG // p * (2 + r % 2) // 3     # V_LARGE


def vcount2(pat, i, j, p, sym):
    """The count of the block rank i sends rank j (Alltoallv) under pattern
    pat; sym: the same as the block j sends i (in-place Alltoallv)."""
    k = i + j if sym else 2 * i + j
    if pat == V_MIXED:
        return VMIXED[k % 6]
    if pat == V_ZERO:
        return 0
    if pat == V_ONE:
        return 1001 if (k == p - 1 if sym else (i, j) == (p - 1, 0)) else 0
    return NBIG // (p * p) * (2 + k % 2) // 3


def vlayout(counts, lay):
    """Displacements of blocks of counts (one per rank) and the elements the
    buffer spans: PACKED in rank order, or REVGAPS in reverse rank order with
    a gap of 1 to 3 elements before each block and 2 after the last."""
    displs, ext = [0] * len(counts), 0
    if lay == PACKED:
        for r, c in enumerate(counts):
            displs[r], ext = ext, ext + c
        return displs, ext
    for r in reversed(range(len(counts))):
        ext += 1 + (r + 1) % 3
        displs[r], ext = ext, ext + counts[r]
    return displs, ext + 2


def place(buf, counts, displs, blocks):
    """buf with blocks[r] at displs[r] (counts[r] elements)."""
    out = buf.copy()
    for r, b in enumerate(blocks):
        out[displs[r]:displs[r] + counts[r]] = b
    return out


class Guarded:
    """A buffer of n elements inside an array with G guard elements."""

    def __init__(self, init, key):
        n = len(init)
        self.full = garbage((*key, K_GUARD), init.dtype.type, n + 2 * G)
        self.full[G:G + n] = init
        self.orig = self.full.copy()
        self.buf = self.full[G:G + n]

    def guards_ok(self):
        return (np.array_equal(self.full[:G], self.orig[:G])
                and np.array_equal(self.full[len(self.full) - G:],
                                   self.orig[len(self.full) - G:]))

    def unchanged(self):
        return np.array_equal(self.full, self.orig)


# ------------------------------------------------------------------ checks

class Checks:
    """All checks on one communicator; every member runs the same sequence,
    the counter `seq` makes the data keys (identical on all members)."""

    def __init__(self, comm, name, tally=TALLY):
        self.comm = comm
        self.name = name
        self.p = comm.Get_size()
        self.me = comm.Get_rank()
        self.seq = 0
        self.tally = tally

    def _key(self):
        self.seq += 1
        return (sum(map(ord, self.name)), self.seq)

    def _finish(self, label, result, bufs, send_ok=True):
        """result: (ok, detail) from _cmp, or True where nothing is received"""
        ok_result, detail = result if isinstance(result, tuple) else (result, "")
        guards = all(b.guards_ok() for b in bufs)
        if ok_result and not guards:
            detail = "guard elements overwritten"
        elif ok_result and not send_ok:
            detail = "send buffer changed"
        self.tally.record(ok_result and guards and send_ok,
                          f"{label} comm={self.name}", detail)

    @staticmethod
    def _cmp(got, want):
        if got.dtype == want.dtype and np.array_equal(got, want):
            return True, ""
        if got.dtype != want.dtype or got.shape != want.shape:
            return False, f"got {got.dtype}{got.shape}, expected {want.dtype}{want.shape}"
        k = int(np.flatnonzero(got != want)[0])
        return False, f"element {k}: got {got[k]!r}, expected {want[k]!r}"

    def _label(self, coll, dtype, n, opname=None, root=None, inplace=False):
        s = f"{coll} {np.dtype(dtype).name}"
        if opname:
            s += f" op={opname}"
        s += f" count={n}"
        if root is not None:
            s += f" root={root}"
        return s + f" in_place={inplace}"

    # -- reductions
    def allreduce(self, dtype, opname, n, inplace):
        key, p, me, op = self._key(), self.p, self.me, OPS[opname]
        inputs = [gen(key, r, dtype, opname, n) for r in range(p)]
        want = reduce_expected(inputs, dtype, opname)
        rb = Guarded(inputs[me] if inplace else garbage(key, dtype, n), key)
        if inplace:
            self.comm.Allreduce(MPI.IN_PLACE, rb.buf, op)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            self.comm.Allreduce(sb.buf, rb.buf, op)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._label("Allreduce", dtype, n, opname, None, inplace),
                     self._cmp(rb.buf, want), bufs, sok)

    def reduce(self, dtype, opname, n, root, inplace):
        key, p, me, op = self._key(), self.p, self.me, OPS[opname]
        inputs = [gen(key, r, dtype, opname, n) for r in range(p)]
        want = reduce_expected(inputs, dtype, opname)
        inp = inplace and me == root
        if inp:
            rb = Guarded(inputs[me], key)
            self.comm.Reduce(MPI.IN_PLACE, rb.buf, op, root)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(garbage(key, dtype, n), key) if me == root else None
            self.comm.Reduce(sb.buf, rb.buf if rb else None, op, root)
            bufs, sok = [sb] + ([rb] if rb else []), sb.unchanged()
        res_ok = self._cmp(rb.buf, want) if me == root else True
        self._finish(self._label("Reduce", dtype, n, opname, root, inp),
                     res_ok, bufs, sok)

    def reduce_scatter_block(self, dtype, opname, n, inplace):
        key, p, me, op = self._key(), self.p, self.me, OPS[opname]
        inputs = [gen(key, r, dtype, opname, n * p) for r in range(p)]
        want = reduce_expected([a[me * n:(me + 1) * n] for a in inputs],
                               dtype, opname)
        if inplace:
            # input in recvbuf (n*p elements); MPI defines only the first n
            # afterwards
            rb = Guarded(inputs[me], key)
            self.comm.Reduce_scatter_block(MPI.IN_PLACE, rb.buf, op)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(garbage(key, dtype, n), key)
            self.comm.Reduce_scatter_block(sb.buf, rb.buf, op)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._label("Reduce_scatter_block", dtype, n, opname,
                                 None, inplace),
                     self._cmp(rb.buf[:n], want), bufs, sok)

    # -- data movement
    def bcast(self, dtype, n, root):
        key, me = self._key(), self.me
        data = gen(key, root, dtype, "SUM", n)
        b = Guarded(data if me == root else garbage(key, dtype, n), key)
        self.comm.Bcast(b.buf, root)
        self._finish(self._label("Bcast", dtype, n, None, root),
                     self._cmp(b.buf, data), [b])

    def scatter(self, dtype, n, root, inplace):
        key, p, me = self._key(), self.p, self.me
        data = gen(key, root, dtype, "SUM", n * p)
        want = data[me * n:(me + 1) * n]
        inp = inplace and me == root
        sb = Guarded(data, key + (K_SEND,)) if me == root else None
        if inp:   # root's own block stays in the send buffer
            self.comm.Scatter(sb.buf, MPI.IN_PLACE, root)
            self._finish(self._label("Scatter", dtype, n, None, root, inp),
                         True, [sb], sb.unchanged())
            return
        rb = Guarded(garbage(key, dtype, n), key)
        self.comm.Scatter(sb.buf if sb else None, rb.buf, root)
        self._finish(self._label("Scatter", dtype, n, None, root, inp),
                     self._cmp(rb.buf, want), [rb] + ([sb] if sb else []),
                     sb.unchanged() if sb else True)

    def gather(self, dtype, n, root, inplace):
        key, p, me = self._key(), self.p, self.me
        inputs = [gen(key, r, dtype, "SUM", n) for r in range(p)]
        want = np.concatenate(inputs)
        inp = inplace and me == root
        if inp:   # root's own contribution already sits in its slot
            init = garbage(key, dtype, n * p)
            init[me * n:(me + 1) * n] = inputs[me]
            rb = Guarded(init, key)
            self.comm.Gather(MPI.IN_PLACE, rb.buf, root)
            self._finish(self._label("Gather", dtype, n, None, root, inp),
                         self._cmp(rb.buf, want), [rb])
            return
        sb = Guarded(inputs[me], key + (K_SEND,))
        rb = Guarded(garbage(key, dtype, n * p), key) if me == root else None
        self.comm.Gather(sb.buf, rb.buf if rb else None, root)
        res_ok = self._cmp(rb.buf, want) if rb else True
        self._finish(self._label("Gather", dtype, n, None, root, inp),
                     res_ok, [sb] + ([rb] if rb else []), sb.unchanged())

    def allgather(self, dtype, n, inplace):
        key, p, me = self._key(), self.p, self.me
        inputs = [gen(key, r, dtype, "SUM", n) for r in range(p)]
        want = np.concatenate(inputs)
        if inplace:
            init = garbage(key, dtype, n * p)
            init[me * n:(me + 1) * n] = inputs[me]
            rb = Guarded(init, key)
            self.comm.Allgather(MPI.IN_PLACE, rb.buf)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(garbage(key, dtype, n * p), key)
            self.comm.Allgather(sb.buf, rb.buf)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._label("Allgather", dtype, n, None, None, inplace),
                     self._cmp(rb.buf, want), bufs, sok)

    def alltoall(self, dtype, n, inplace):
        key, p, me = self._key(), self.p, self.me
        inputs = [gen(key, r, dtype, "SUM", n * p) for r in range(p)]
        want = np.concatenate([a[me * n:(me + 1) * n] for a in inputs])
        if inplace:
            rb = Guarded(inputs[me], key)
            self.comm.Alltoall(MPI.IN_PLACE, rb.buf)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(garbage(key, dtype, n * p), key)
            self.comm.Alltoall(sb.buf, rb.buf)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._label("Alltoall", dtype, n, None, None, inplace),
                     self._cmp(rb.buf, want), bufs, sok)

    # -- vector collectives, Scan, Exscan: the gaps of a layout start with
    # garbage and must keep it (the expected buffer keeps them)
    def _vlabel(self, coll, dtype, pat, lay=None, opname=None, root=None,
                inplace=False):
        s = f"{coll} {np.dtype(dtype).name}"
        if opname:
            s += f" op={opname}"
        s += f" counts={pat}"
        if lay:
            s += f" layout={lay}"
        if root is not None:
            s += f" root={root}"
        return s + f" in_place={inplace}"

    def allgatherv(self, dtype, pat, lay, inplace):
        key, p, me = self._key(), self.p, self.me
        counts = [vcount1(pat, r, p) for r in range(p)]
        displs, ext = vlayout(counts, lay)
        inputs = [gen(key, r, dtype, "SUM", counts[r]) for r in range(p)]
        init = garbage(key, dtype, ext)
        want = place(init, counts, displs, inputs)
        if inplace:   # this rank's block already in place
            rb = Guarded(place(init, counts[me:me + 1], displs[me:me + 1],
                               inputs[me:me + 1]), key)
            self.comm.Allgatherv(MPI.IN_PLACE, [rb.buf, (counts, displs)])
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(init, key)
            self.comm.Allgatherv(sb.buf, [rb.buf, (counts, displs)])
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._vlabel("Allgatherv", dtype, pat, lay, None, None, inplace),
                     self._cmp(rb.buf, want), bufs, sok)

    def alltoallv(self, dtype, pat, lay, inplace):
        """Receive blocks in layout lay; send blocks in the other layout (in
        place: both in lay, the counts symmetric)."""
        key, p, me = self._key(), self.p, self.me
        slay = lay if inplace else (REVGAPS if lay == PACKED else PACKED)
        sends = []   # every rank's send counts, displacements, extent
        for i in range(p):
            c = [vcount2(pat, i, j, p, inplace) for j in range(p)]
            sends.append((c, *vlayout(c, slay)))
        inputs = [gen(key, i, dtype, "SUM", sends[i][2]) for i in range(p)]
        rc = [sends[j][0][me] for j in range(p)]
        rd, rext = vlayout(rc, lay)
        blocks = [inputs[j][sends[j][1][me]:sends[j][1][me] + rc[j]] for j in range(p)]
        if inplace:
            rb = Guarded(inputs[me], key)
            self.comm.Alltoallv(MPI.IN_PLACE, [rb.buf, (rc, rd)])
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(garbage(key, dtype, rext), key)
            self.comm.Alltoallv([sb.buf, (sends[me][0], sends[me][1])],
                                [rb.buf, (rc, rd)])
            bufs, sok = [rb, sb], sb.unchanged()
        want = place(rb.orig[G:G + rext], rc, rd, blocks)
        self._finish(self._vlabel("Alltoallv", dtype, pat, lay, None, None, inplace),
                     self._cmp(rb.buf, want), bufs, sok)

    def gatherv(self, dtype, pat, lay, root, inplace):
        key, p, me = self._key(), self.p, self.me
        counts = [vcount1(pat, r, p) for r in range(p)]
        displs, ext = vlayout(counts, lay)
        inputs = [gen(key, r, dtype, "SUM", counts[r]) for r in range(p)]
        inp = inplace and me == root
        label = self._vlabel("Gatherv", dtype, pat, lay, None, root, inp)
        if me != root:   # the receive arguments are not significant here
            sb = Guarded(inputs[me], key + (K_SEND,))
            self.comm.Gatherv(sb.buf, None, root)
            self._finish(label, True, [sb], sb.unchanged())
            return
        init = garbage(key, dtype, ext)
        want = place(init, counts, displs, inputs)
        if inp:   # root's own block already in place
            rb = Guarded(place(init, counts[me:me + 1], displs[me:me + 1],
                               inputs[me:me + 1]), key)
            self.comm.Gatherv(MPI.IN_PLACE, [rb.buf, (counts, displs)], root)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(init, key)
            self.comm.Gatherv(sb.buf, [rb.buf, (counts, displs)], root)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(label, self._cmp(rb.buf, want), bufs, sok)

    def scatterv(self, dtype, pat, lay, root, inplace):
        key, p, me = self._key(), self.p, self.me
        counts = [vcount1(pat, r, p) for r in range(p)]
        displs, ext = vlayout(counts, lay)
        data = gen(key, root, dtype, "SUM", ext)
        want = data[displs[me]:displs[me] + counts[me]]
        inp = inplace and me == root
        label = self._vlabel("Scatterv", dtype, pat, lay, None, root, inp)
        sb = Guarded(data, key + (K_SEND,)) if me == root else None
        smsg = [sb.buf, (counts, displs)] if sb else None
        if inp:   # root's own block stays in the send buffer
            self.comm.Scatterv(smsg, MPI.IN_PLACE, root)
            self._finish(label, True, [sb], sb.unchanged())
            return
        rb = Guarded(garbage(key, dtype, counts[me]), key)
        self.comm.Scatterv(smsg, rb.buf, root)
        self._finish(label, self._cmp(rb.buf, want), [rb] + ([sb] if sb else []),
                     sb.unchanged() if sb else True)

    def reduce_scatter(self, dtype, opname, pat, inplace):
        key, p, me, op, w = self._key(), self.p, self.me, VOPS[opname], width(opname)
        counts = [vcount1(pat, r, p) for r in range(p)]
        off = sum(counts[:me])
        inputs = [gen_red(key, r, dtype, opname, sum(counts)) for r in range(p)]
        want = reduce_expected([a[off * w:(off + counts[me]) * w] for a in inputs],
                               dtype, opname)
        if inplace:
            # the whole vector in recvbuf; only this rank's block (at its
            # start) is defined afterwards
            rb = Guarded(inputs[me], key)
            self.comm.Reduce_scatter(MPI.IN_PLACE, message(rb.buf, opname), counts, op)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            rb = Guarded(garbage(key, dtype, counts[me] * w), key)
            self.comm.Reduce_scatter(message(sb.buf, opname), message(rb.buf, opname),
                                     counts, op)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._vlabel("Reduce_scatter", dtype, pat, None, opname, None,
                                  inplace),
                     self._cmp(rb.buf[:counts[me] * w], want), bufs, sok)

    def scan(self, dtype, opname, n, inplace, exclusive=False):
        """Scan, or Exscan (exclusive): Exscan leaves rank 0's receive
        buffer undefined; Open MPI 4.1 does not touch it, and neither may
        Overpass (programs that preset it would see a change)."""
        key, me, op, w = self._key(), self.me, VOPS[opname], width(opname)
        inputs = [gen_red(key, r, dtype, opname, n) for r in range(me + 1)]
        rb = Guarded(inputs[me] if inplace else garbage(key, dtype, n * w), key)
        if exclusive and me == 0:
            want = rb.buf.copy()
        else:
            want = reduce_expected(inputs[:me if exclusive else me + 1], dtype, opname)
        call = self.comm.Exscan if exclusive else self.comm.Scan
        if inplace:
            call(MPI.IN_PLACE, message(rb.buf, opname), op)
            bufs, sok = [rb], True
        else:
            sb = Guarded(inputs[me], key + (K_SEND,))
            call(message(sb.buf, opname), message(rb.buf, opname), op)
            bufs, sok = [rb, sb], sb.unchanged()
        self._finish(self._label("Exscan" if exclusive else "Scan", dtype, n, opname,
                                 None, inplace),
                     self._cmp(rb.buf, want), bufs, sok)

    def barrier(self):
        """Nobody may leave the barrier before the last rank entered it
        (checked when all ranks share a node, i.e. one monotonic clock);
        the last rank enters 10 ms late."""
        self.seq += 1
        shm = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        one_node = shm.Get_size() == self.p
        shm.Free()
        if self.me == self.p - 1:
            time.sleep(0.01)
        t_in = time.monotonic_ns()
        self.comm.Barrier()
        t_out = time.monotonic_ns()
        # exchange the times point-to-point (not through a collective)
        times = exchange_p2p(self.comm, (t_in, t_out))
        ok = (not one_node) or min(t[1] for t in times) >= max(t[0] for t in times)
        self.tally.record(ok, f"Barrier comm={self.name}",
                          "a rank left before the last one entered")

    # -- the standard sequence
    def run_all(self, counts, vector=True):
        """vector: the vector collectives, Scan and Exscan too"""
        p = self.p
        for dtype in DTYPES:
            for opname in OPS:
                if not op_valid(dtype, opname):
                    continue
                for n in counts:
                    for inplace in (False, True):
                        self.allreduce(dtype, opname, n, inplace)
                        for root in range(p):
                            self.reduce(dtype, opname, n, root, inplace)
                        self.reduce_scatter_block(dtype, opname, n, inplace)
        for dtype in DTYPES:
            for n in counts:
                for root in range(p):
                    self.bcast(dtype, n, root)
                for inplace in (False, True):
                    for root in range(p):
                        self.scatter(dtype, n, root, inplace)
                        self.gather(dtype, n, root, inplace)
                    self.allgather(dtype, n, inplace)
                    self.alltoall(dtype, n, inplace)
        if vector:
            self.run_vector(counts)
        self.barrier()

    def run_vector(self, counts):
        """The vector collectives with every counts pattern and layout; Scan
        and Exscan with counts."""
        p = self.p
        for dtype in VDTYPES:
            for pat in (V_MIXED, V_ZERO, V_ONE):
                for lay in (PACKED, REVGAPS):
                    for inplace in (False, True):
                        self.allgatherv(dtype, pat, lay, inplace)
                        self.alltoallv(dtype, pat, lay, inplace)
                        for root in range(p):
                            self.gatherv(dtype, pat, lay, root, inplace)
                            self.scatterv(dtype, pat, lay, root, inplace)
        for dtype, opname in VRED:
            for inplace in (False, True):
                for pat in (V_MIXED, V_ZERO, V_ONE):
                    self.reduce_scatter(dtype, opname, pat, inplace)
                for n in counts:
                    self.scan(dtype, opname, n, inplace)
                    self.scan(dtype, opname, n, inplace, exclusive=True)

    def run_large(self):
        p = self.p
        for inplace in (False, True):
            self.allreduce(np.int32, "SUM", NBIG, inplace)
            self.allreduce(np.float64, "MAX", NBIG // 2, inplace)
            self.reduce(np.int64, "SUM", NBIG // 2, 0, inplace)
            self.reduce_scatter_block(np.int32, "SUM", NBIG // p, inplace)
            self.scatter(np.int32, NBIG // p, p - 1, inplace)
            self.gather(np.float32, NBIG // p, 0, inplace)
            self.allgather(np.int32, NBIG // p, inplace)
            self.alltoall(np.int32, NBIG // p, inplace)
            self.allgatherv(np.int32, V_LARGE, REVGAPS, inplace)
            self.alltoallv(np.int32, V_LARGE, REVGAPS, inplace)
            self.gatherv(np.float64, V_LARGE, PACKED, 0, inplace)
            self.scatterv(np.int32, V_LARGE, REVGAPS, p - 1, inplace)
            self.reduce_scatter(np.int32, "SUM", V_LARGE, inplace)
            self.scan(np.int32, "SUM", NBIG, inplace)
            self.scan(np.float64, "SUM", NBIG // 2, inplace, exclusive=True)
        self.allreduce(np.complex128, "PROD", NBIG // 4, True)
        self.bcast(np.int32, NBIG, p - 1)


def exchange_p2p(comm, obj):
    """Allgather of a small object by point-to-point messages."""
    p, me = comm.Get_size(), comm.Get_rank()
    reqs = [comm.isend(obj, dest=r, tag=77) for r in range(p) if r != me]
    out = [obj if r == me else comm.recv(source=r, tag=77) for r in range(p)]
    for rq in reqs:
        rq.wait()
    return out


def pickle_checks(comm, name):
    """The lowercase, pickle-based allreduce and bcast."""
    p, me = comm.Get_size(), comm.Get_rank()
    s = comm.allreduce(me + 1, op=MPI.SUM)
    TALLY.record(s == p * (p + 1) // 2, f"allreduce(pickle) comm={name}",
                 f"got {s!r}")
    root = p - 1
    obj = {"root": root, "list": list(range(10)), "text": "overpass"} \
        if me == root else None
    got = comm.bcast(obj, root=root)
    TALLY.record(got == {"root": root, "list": list(range(10)), "text": "overpass"},
                 f"bcast(pickle) comm={name}", f"got {got!r}")


def thread_checks():
    """Two threads, each running collectives on its own dup of COMM_WORLD."""
    if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        TALLY.record(False, "threads", "MPI_THREAD_MULTIPLE not provided")
        return
    comms = [WORLD.Dup(), WORLD.Dup()]
    errors = []

    def work(i):
        try:
            c = Checks(comms[i], f"thread{i}")
            for rep in range(3):
                for n in (1, 7, 1001):
                    c.allreduce(np.float64, "SUM", n, rep % 2 == 1)
                    c.allreduce(np.int32, "MAX", n, rep % 2 == 0)
                    c.bcast(np.int64, n, (rep + i) % c.p)
                    c.allgather(np.int32, n, rep % 2 == 1)
                    c.alltoall(np.float32, n, rep % 2 == 0)
                    c.reduce(np.complex128, "SUM", n, (rep + 1) % c.p, rep % 2 == 1)
                    c.reduce_scatter_block(np.int64, "SUM", n, rep % 2 == 0)
                comms[i].Barrier()
        except Exception as exc:  # keep going: report, do not hang here
            errors.append(f"thread {i}: {exc!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        TALLY.record(False, "threads", e)
    for c in comms:
        c.Free()


def main():
    wsize, wrank = WORLD.Get_size(), WORLD.Get_rank()
    split = WORLD.Split(color=(2 * wrank) // wsize, key=wsize - wrank)  # halves, reversed
    dup = WORLD.Dup()

    Checks(WORLD, "world").run_all(COUNTS)
    Checks(split, "split").run_all((1, 1001))
    Checks(dup, "dup").run_all((0, 7), vector=False)   # the same group as world
    Checks(WORLD, "world-large").run_large()
    pickle_checks(WORLD, "world")
    pickle_checks(split, "split")
    thread_checks()
    split.Free()
    dup.Free()
    AFFINE.Free()
    PAIR.Free()

    counts = exchange_p2p(WORLD, (TALLY.passed, TALLY.failed))
    passed = sum(c[0] for c in counts)
    failed = sum(c[1] for c in counts)
    if wrank == 0:
        print(f"{PROG}: {passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
