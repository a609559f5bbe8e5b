#!/usr/bin/python3
"""check_nonblocking_mpi4py: the nonblocking collectives called through mpi4py
(which initialises MPI at MPI_THREAD_MULTIPLE).

Run: mpirun -np N /usr/bin/python3 tests/mpi/check_nonblocking_mpi4py.py

Iallreduce, Ibcast, Ireduce, Iallgather, Iallgatherv, Ialltoall, Ialltoallv,
Igather, Igatherv, Iscatter, Iscatterv, Ireduce_scatter,
Ireduce_scatter_block, Iscan, Iexscan and Ibarrier on numpy arrays (int32,
int64, float32, float64, complex128; SUM and MAX), MPI.IN_PLACE wherever the
call allows it, roots other than 0, counts 0 to ~1 MiB, on COMM_WORLD and on
a communicator of all ranks in reverse order.  The vector calls have counts
that differ and are zero on some ranks, blocks in reverse rank order with
gaps between them.

Every rank's input comes from a numpy Generator seeded with (case, rank), so
every rank computes the expected result locally; values are small integers
(a quarter of one for floating point), so sums are exact in any order.  Each
case is also run, BEFORE the nonblocking call, through the blocking call on
the same input and the same initial receive buffer: the nonblocking result
must equal both, bit for bit, over the whole receive array (guard elements,
gaps and insignificant buffers such as the recvbuf of Ireduce at a non-root
must keep their initial contents); send arrays must be unchanged; completed
requests must be MPI.REQUEST_NULL.

Requests are completed by every mpi4py completion call: req.Wait() and
req.Test() loops (last posted first), MPI.Request.Waitall, Testall,
Testany, Waitany, Waitsome and Testsome, and req.Get_status() polling
before req.Wait(), always with an Irecv/Isend pair (ring on COMM_WORLD,
whose status is checked) and MPI.REQUEST_NULL among them: first one
collective at a time, then batches of every collective of one (dtype,
in-place) pair posted back to back and completed together.  Ibarrier is
also checked for its meaning (the last rank posts it 10 ms late; on one
node no rank may see it complete earlier), and a thread completes requests
that another thread posted on its own Dup of COMM_WORLD.

Prints from rank 0 one final line "mpi4py nonblocking: N cases on P ranks
right" (N: the cases of one rank) or "... N cases on P ranks, M failures"
and exits non-zero if anything failed.
"""

import queue
import sys
import threading
import time

import numpy as np
from mpi4py import MPI

SEED = 20251204
G = 2                      # guard elements on each side of every array
MAXPRINT = 20              # failure messages per rank
COUNTS = (7, 1, 1001, 0)   # in turn
NBIG = 131072              # 1 MiB of float64
DTYPES = (np.int32, np.float64, np.int64, np.float32, np.complex128)
OPS = {"SUM": MPI.SUM, "MAX": MPI.MAX}
WORLD = MPI.COMM_WORLD

COLLS = ("Allreduce", "Bcast", "Reduce", "Allgather", "Allgatherv", "Alltoall",
         "Alltoallv", "Gather", "Gatherv", "Scatter", "Scatterv", "Reduce_scatter",
         "Reduce_scatter_block", "Scan", "Exscan", "Barrier")
NO_INPLACE = ("Bcast", "Barrier")
ROOTED = ("Bcast", "Reduce", "Gather", "Gatherv", "Scatter", "Scatterv")
WAYS = ("req.Wait", "req.Test", "Waitall", "Testall", "Testany", "Waitany",
        "Waitsome", "Testsome", "req.Get_status")


class Tally:
    def __init__(self):
        self.cases = 0
        self.failed = 0
        self.lock = threading.Lock()

    def record(self, ok, label, detail=""):
        with self.lock:
            self.cases += 1
            if ok:
                return
            self.failed += 1
            if self.failed <= MAXPRINT:
                print(f"FAIL rank {WORLD.rank}: {label}: {detail}", flush=True)


TALLY = Tally()


def values(key, rank, dtype, n):
    """Input of `rank` for case `key`: reproducible on every rank."""
    rng = np.random.default_rng([SEED, key, rank])
    v = rng.integers(-1000, 1000, size=n, endpoint=True)
    if np.issubdtype(dtype, np.complexfloating):
        w = rng.integers(-1000, 1000, size=n, endpoint=True)
        return ((v + 1j * w) * 0.25).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return (v * 0.25).astype(dtype)
    return v.astype(dtype)


def reduced(arrays, dtype, opname, n):
    if not arrays:
        return np.zeros(n, dtype)
    stack = np.stack(arrays)
    return stack.sum(axis=0, dtype=dtype) if opname == "SUM" else stack.max(axis=0)


def garbage(dtype, n):
    """Initial contents of receive arrays (guards, gaps, untouched parts)."""
    g = np.arange(n) % 97 - 12345
    return (g * 1j + g).astype(dtype) if np.issubdtype(dtype, np.complexfloating) \
        else g.astype(dtype)


def revgaps(counts):
    """Displacements in reverse rank order, a gap of one element before every
    block and after the last; and the elements spanned."""
    displs, ext = [0] * len(counts), 0
    for r in reversed(range(len(counts))):
        ext += 1
        displs[r] = ext
        ext += counts[r]
    return displs, ext + 1


class Case:
    """One collective: its arrays, its blocking reference (computed at
    construction, before anything is posted) and its expected receive array.

    call(blocking, send, recv) issues the blocking (returns None) or the
    nonblocking (returns the request) call on views of the full arrays."""

    def __init__(self, comm, cname, label, call, send, recv, want, care):
        self.comm, self.cname, self.label, self.call = comm, cname, label, call
        self.send, self.send0 = send, send.copy()
        self.recv_ref = recv.copy()
        self.recv = recv
        self.want, self.care = want, care
        call(True, send.copy(), self.recv_ref)
        self.t_post = self.t_done = 0.0
        self.req = None

    def post(self):
        if self.cname == "Barrier" and self.comm.rank == self.comm.size - 1:
            time.sleep(0.01)                  # the last rank comes 10 ms late
        self.t_post = time.monotonic()
        self.req = self.call(False, self.send, self.recv)
        return self.req

    def check(self, how, tally=TALLY):
        label = f"{self.label} completed by {how}"
        if self.req != MPI.REQUEST_NULL:
            return tally.record(False, label, "request not MPI.REQUEST_NULL after completion")
        if self.cname == "Barrier":
            times = self.comm.allgather((self.t_post, self.t_done))
            one_node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
            same = one_node.size == self.comm.size
            one_node.Free()
            late = max(t[0] for t in times)
            return tally.record(not same or min(t[1] for t in times) >= late, label,
                                "a rank saw it complete before the last rank posted it")
        if not np.array_equal(self.send, self.send0):
            return tally.record(False, label, "send array changed")
        for what, ref in (("expected", self.want), ("blocking call's", self.recv_ref)):
            bad = np.flatnonzero(self.care & (self.recv != ref))
            if len(bad):
                k = int(bad[0])
                return tally.record(False, label, f"element {k - G} of {len(self.recv) - 2 * G}: "
                                    f"got {self.recv[k]!r}, {what} {ref[k]!r}")
        tally.record(True, label)


class Builder:
    """Makes the cases on one communicator (every member makes the same
    sequence; the case number is the data key)."""

    def __init__(self, comm, name):
        self.comm, self.name = comm, name
        self.p, self.me = comm.Get_size(), comm.Get_rank()

    def make(self, cname, dtype, n, inplace, root, key):
        comm, p, me = self.comm, self.p, self.me
        opname = "MAX" if key % 2 and not np.issubdtype(dtype, np.complexfloating) else "SUM"
        op = OPS[opname]
        ip = MPI.IN_PLACE
        inp = [values(key, r, dtype, n) for r in range(p)]   # the per-rank inputs
        I = slice(G, -G)                                      # the part inside the guards

        def arrays(ns, nr):
            send = garbage(dtype, ns + 2 * G) + 1
            recv = garbage(dtype, nr + 2 * G)
            return send, recv, recv.copy(), np.ones(nr + 2 * G, bool)

        def fn(name):
            return lambda blocking: getattr(comm, name if blocking else "I" + name.lower())

        label = (f"I{cname.lower()} {np.dtype(dtype).name} comm={self.name} count={n}"
                 + (f" op={opname}" if cname in ("Allreduce", "Reduce", "Reduce_scatter",
                                                 "Reduce_scatter_block", "Scan", "Exscan")
                    else "")
                 + (f" root={root}" if cname in ROOTED else "") + f" in_place={inplace}"
                 + f" case={key}")
        f = fn(cname)

        if cname in ("Allreduce", "Scan", "Exscan"):
            send, recv, want, care = arrays(n, n)
            (recv if inplace else send)[I] = inp[me]
            if cname == "Allreduce":
                want[I] = reduced(inp, dtype, opname, n)
            elif cname == "Scan":
                want[I] = reduced(inp[:me + 1], dtype, opname, n)
            elif me > 0:
                want[I] = reduced(inp[:me], dtype, opname, n)
            else:
                care[I] = False                   # rank 0's Exscan result: undefined

            def call(b, s, r):
                return f(b)(ip if inplace else s[I], r[I], op)
        elif cname == "Bcast":
            send, recv, want, care = arrays(0, n)
            if me == root:
                recv[I] = inp[root]
            want[I] = inp[root]

            def call(b, s, r):
                return f(b)(r[I], root)
        elif cname == "Reduce":
            send, recv, want, care = arrays(n, n)
            (recv if inplace and me == root else send)[I] = inp[me]
            if me == root:
                want[I] = reduced(inp, dtype, opname, n)

            def call(b, s, r):
                return f(b)(ip if inplace and me == root else s[I], r[I], op, root)
        elif cname in ("Allgather", "Gather"):
            send, recv, want, care = arrays(n, p * n)
            send[I] = inp[me]
            gets = cname == "Allgather" or me == root
            if inplace and gets:
                recv[G + me * n:G + (me + 1) * n] = inp[me]
            if gets:
                want[I] = np.concatenate(inp) if n else want[I]

            def call(b, s, r):
                sb = ip if inplace and gets else s[I]
                return f(b)(sb, r[I]) if cname == "Allgather" else f(b)(sb, r[I], root)
        elif cname in ("Allgatherv", "Gatherv"):
            counts = [((r + key) % 3) * n for r in range(p)]
            displs, ext = revgaps(counts)
            inp = [values(key, r, dtype, counts[r]) for r in range(p)]
            send, recv, want, care = arrays(counts[me], ext)
            send[I] = inp[me]
            gets = cname == "Allgatherv" or me == root
            for r in range(p):
                if gets:
                    want[G + displs[r]:G + displs[r] + counts[r]] = inp[r]
                if inplace and gets and r == me:
                    recv[G + displs[r]:G + displs[r] + counts[r]] = inp[r]

            def call(b, s, r):
                sb = ip if inplace and gets else s[I]
                rb = [r[I], counts, displs, MPI._typedict[np.dtype(dtype).char]]
                return f(b)(sb, rb) if cname == "Allgatherv" else f(b)(sb, rb, root)
        elif cname in ("Scatter", "Scatterv"):
            if cname == "Scatter":
                counts, displs, ext = [n] * p, [r * n for r in range(p)], p * n
            else:
                counts = [((r + key) % 3) * n for r in range(p)]
                displs, ext = revgaps(counts)
            inp = [values(key, r, dtype, counts[r]) for r in range(p)]
            send, recv, want, care = arrays(ext if me == root else 0, counts[me])
            if me == root:
                for r in range(p):
                    send[G + displs[r]:G + displs[r] + counts[r]] = inp[r]
            if not (inplace and me == root):      # in place, the root's recvbuf is not used
                want[I] = inp[me]

            def call(b, s, r):
                rb = ip if inplace and me == root else r[I]
                if cname == "Scatter":
                    return f(b)(s[I], rb, root)
                return f(b)([s[I], counts, displs, MPI._typedict[np.dtype(dtype).char]], rb, root)
        elif cname == "Alltoall":
            blocks = [[values(key + 7919 * (d + 1), s, dtype, n) for d in range(p)]
                      for s in range(p)]            # blocks[s][d]: from s to d
            send, recv, want, care = arrays(p * n, p * n)
            (recv if inplace else send)[I] = np.concatenate(blocks[me]) if n else []
            want[I] = np.concatenate([blocks[s][me] for s in range(p)]) if n else []

            def call(b, s, r):
                return f(b)(ip if inplace else s[I], r[I])
        elif cname == "Alltoallv":
            def cnt(i, j):                          # symmetric in place
                return (((i + j) if inplace else (i + 2 * j)) + key) % 3 * n
            blocks = [[values(key + 7919 * (d + 1), s, dtype, cnt(s, d)) for d in range(p)]
                      for s in range(p)]
            scounts = [cnt(me, d) for d in range(p)]
            sdispls = list(np.cumsum([0] + scounts[:-1]))
            rcounts = [cnt(s, me) for s in range(p)]
            rdispls, ext = revgaps(rcounts)
            send, recv, want, care = arrays(sum(scounts), ext)
            for d in range(p):
                if inplace:
                    recv[G + rdispls[d]:G + rdispls[d] + rcounts[d]] = blocks[me][d]
                else:
                    send[G + sdispls[d]:G + sdispls[d] + scounts[d]] = blocks[me][d]
                want[G + rdispls[d]:G + rdispls[d] + rcounts[d]] = blocks[d][me]
            t = MPI._typedict[np.dtype(dtype).char]

            def call(b, s, r):
                sb = ip if inplace else [s[I], scounts, [int(x) for x in sdispls], t]
                return f(b)(sb, [r[I], rcounts, rdispls, t])
        elif cname in ("Reduce_scatter", "Reduce_scatter_block"):
            counts = [((r + key) % 3) * n for r in range(p)] if cname == "Reduce_scatter" \
                else [n] * p
            tot, off = sum(counts), sum(counts[:me])
            inp = [values(key, r, dtype, tot) for r in range(p)]
            send, recv, want, care = arrays(tot, tot if inplace else counts[me])
            (recv if inplace else send)[I] = inp[me]
            want[G:G + counts[me]] = reduced([a[off:off + counts[me]] for a in inp], dtype,
                                             opname, counts[me])
            if inplace:
                care[G + counts[me]:G + tot] = False  # only this rank's block is defined

            def call(b, s, r):
                sb = ip if inplace else s[I]
                if cname == "Reduce_scatter":
                    return f(b)(sb, r[I], counts, op)
                return f(b)(sb, r[I], op)
        else:                                       # Barrier
            send, recv, want, care = arrays(0, 0)

            def call(b, s, r):
                return f(b)()
        return Case(comm, cname, label, call, send, recv, want, care)


class P2P:
    """An Irecv/Isend pair (ring on COMM_WORLD) to mix with the collectives."""

    def __init__(self, tag):
        self.tag = tag % 30000
        self.src, self.dst = (WORLD.rank - 1) % WORLD.size, (WORLD.rank + 1) % WORLD.size
        self.out = np.array([self.tag * 10 + WORLD.rank], np.int64)
        self.got = np.array([-1], np.int64)

    def post(self):
        self.rreq = WORLD.Irecv(self.got, source=self.src, tag=self.tag)
        self.sreq = WORLD.Isend(self.out, dest=self.dst, tag=self.tag)
        return self.rreq, self.sreq

    def check(self, how, status):
        ok = self.got[0] == self.tag * 10 + self.src
        if ok and status is not None:
            ok = status.Get_source() == self.src and status.Get_tag() == self.tag
        TALLY.record(ok, f"Irecv beside the collectives, completed by {how}",
                     f"got {self.got[0]} (status {status and status.Get_source()})")


def finish(reqs, way, tally=TALLY):
    """Completes reqs (a list with MPI.REQUEST_NULL among them) in the way
    `way`; every active request must be reported once.  Returns the statuses
    where the way gives them (else None)."""
    active = [r != MPI.REQUEST_NULL for r in reqs]
    seen = [False] * len(reqs)
    statuses = None

    def saw(i):
        if not 0 <= i < len(reqs) or seen[i] or not active[i]:
            tally.record(False, f"{way}", f"index {i} reported twice, inactive or out of range")
        else:
            seen[i] = True

    if way == "req.Wait":
        statuses = [MPI.Status() for _ in reqs]
        for i in reversed(range(len(reqs))):
            reqs[i].Wait(statuses[i])
        seen = active
    elif way == "req.Test":
        for r in reversed(reqs):
            while not r.Test():
                pass
        seen = active
    elif way == "Waitall":
        statuses = [MPI.Status() for _ in reqs]
        MPI.Request.Waitall(reqs, statuses)
        seen = active
    elif way == "Testall":
        while not MPI.Request.Testall(reqs):
            pass
        seen = active
    elif way in ("Testany", "Waitany"):
        while True:
            if way == "Testany":
                i, flag = MPI.Request.Testany(reqs)
                if not flag:
                    continue
            else:
                i = MPI.Request.Waitany(reqs)
            if i == MPI.UNDEFINED:
                break
            saw(i)
    elif way in ("Waitsome", "Testsome"):
        while True:
            idx = MPI.Request.Waitsome(reqs) if way == "Waitsome" else MPI.Request.Testsome(reqs)
            if idx is None:
                break
            for i in idx:
                saw(i)
    else:                                         # req.Get_status, then req.Wait
        statuses = [MPI.Status() for _ in reqs]
        for i, r in enumerate(reqs):
            while not r.Get_status(statuses[i]):
                pass
            if r != MPI.REQUEST_NULL:
                r.Wait()
        seen = active
    if seen != active:
        tally.record(False, f"{way}", "an active request was never reported")
    if any(r != MPI.REQUEST_NULL for r in reqs):
        tally.record(False, f"{way}", "a request is not MPI.REQUEST_NULL afterwards")
    return statuses


def run(cases, way, tag):
    """Posts the cases in order between an Irecv and an Isend, with
    MPI.REQUEST_NULL after them; completes all in the way `way`; checks."""
    p2p = P2P(tag)
    rreq, sreq = p2p.post()
    reqs = [rreq] + [c.post() for c in cases] + [MPI.REQUEST_NULL, sreq]
    statuses = finish(reqs, way)
    now = time.monotonic()
    for i, c in enumerate(cases):
        c.req = reqs[i + 1]
        c.t_done = now
    p2p.check(way, statuses[0] if statuses else None)
    for c in cases:
        c.check(way + (" (batch)" if len(cases) > 1 else ""))


def thread_handoff(key0):
    """Thread A posts Iallreduce, Ibcast and Iallgatherv on its Dup and hands
    each request to thread B, which completes it (Wait, Test loop) and hands
    it back; thread A checks.  Both threads at once, each on its own Dup."""
    if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        TALLY.record(False, "threads", "MPI_THREAD_MULTIPLE not provided")
        return
    comms = [WORLD.Dup(), WORLD.Dup()]
    inbox = [queue.Queue(), queue.Queue()]
    done = [queue.Queue(), queue.Queue()]
    errors = []

    def work(i):
        try:
            b = Builder(comms[i], f"dup{i}")
            for it in range(6):
                cases = [b.make(cname, DTYPES[(it + i) % len(DTYPES)], COUNTS[it % 4], it % 2 == 1
                                and cname != "Bcast", (it + i) % b.p, key0 + 100 * i + 10 * it + k)
                         for k, cname in enumerate(("Allreduce", "Bcast", "Allgatherv"))]
                for c in cases:
                    c.post()
                    inbox[1 - i].put(c)
                for _ in cases:                 # complete the other thread's requests
                    c = inbox[i].get()
                    if c.comm.rank % 2:
                        c.req.Wait()
                    else:
                        while not c.req.Test():
                            time.sleep(0)
                    done[1 - i].put(c)
                for _ in cases:
                    done[i].get().check("the other thread")
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
    reverse = WORLD.Split(0, wsize - wrank)
    key, nbatch = 0, 0
    for comm, name in ((WORLD, "world"), (reverse, "reversed")):
        b = Builder(comm, name)
        # one at a time; root: the last rank
        for dtype in DTYPES:
            for inplace in (False, True):
                for cname in COLLS:
                    if inplace and cname in NO_INPLACE:
                        continue
                    key += 1
                    c = b.make(cname, dtype, COUNTS[key % 4], inplace, b.p - 1, key)
                    run([c], WAYS[key % len(WAYS)], key)
        # batches; root: rank 1
        for dtype in DTYPES:
            for inplace in (False, True):
                cases = []
                for cname in COLLS:
                    if inplace and cname in NO_INPLACE:
                        continue
                    key += 1
                    cases.append(b.make(cname, dtype, COUNTS[key % 4], inplace, 1 % b.p, key))
                nbatch += 1
                run(cases, WAYS[nbatch % len(WAYS)], key)
    # large: 1 MiB
    b = Builder(WORLD, "world")
    big = []
    for cname, inplace in (("Allreduce", True), ("Allreduce", False), ("Bcast", False),
                           ("Alltoall", False), ("Reduce_scatter_block", True)):
        key += 1
        n = NBIG // wsize if cname in ("Alltoall", "Reduce_scatter_block") else NBIG
        big.append(b.make(cname, np.float64, n, inplace, wsize - 1, key))
    run(big, "Waitsome", key)
    thread_handoff(key + 1)
    reverse.Free()

    failed = WORLD.allreduce(TALLY.failed, op=MPI.SUM)
    if wrank == 0:
        if failed == 0:
            print(f"mpi4py nonblocking: {TALLY.cases} cases on {wsize} ranks right", flush=True)
        else:
            print(f"mpi4py nonblocking: {TALLY.cases} cases on {wsize} ranks, {failed} failures",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
