/* check_nonblocking_threads.c - nonblocking collectives under MPI_THREAD_MULTIPLE, their requests
 * completed by threads other than the one that posted them.
 *
 * A plain, unmodified MPI program.  NTHREADS pthreads per rank, thread t with its own duplicate
 * of MPI_COMM_WORLD (made in the main thread, in a fixed order), post MPI_Iallreduce (in place on
 * odd iterations), MPI_Ibcast (rotating root), MPI_Ialltoall (in place on some iterations) and
 * MPI_Iallgatherv (counts that differ and are zero on some ranks, blocks in reverse rank order
 * with gaps) on their own communicator, with MPI_INT and MPI_DOUBLE data, counts 0 to 40000.
 * Before posting, the poster computes the reference with the blocking PMPI_* call on the same
 * communicator, the same input and the same initial receive buffer; after completion the whole
 * receive buffer (guard element and gaps included) must equal the reference, the data must equal
 * the value known analytically from (rank, thread, iteration, index), the send buffer must be
 * unchanged and the request MPI_REQUEST_NULL.
 *
 * Phases:
 *   handoff  thread t posts its 4 collectives of an iteration and hands each request, through a
 *            mutex-protected mailbox, to thread (t+1) % NTHREADS, which completes it (last handed
 *            first) with MPI_Wait, an MPI_Test loop or MPI_Waitany (MPI_REQUEST_NULL beside it),
 *            in turn; meanwhile thread t serves the mailbox of thread t-1.  The poster checks once
 *            the other thread reports completion.  No thread starts the next iteration (whose
 *            first calls are the blocking references) before every request of this rank's
 *            iteration is complete, so that no thread blocks while another waits on its service.
 *   mixed    thread 0 posts 6 nonblocking collectives and completes them itself with one
 *            MPI_Waitall (MPI_REQUEST_NULL among them); thread 1 meanwhile runs the blocking
 *            MPI_Allreduce, MPI_Bcast and MPI_Alltoall on its own communicator (checked
 *            analytically); the other threads post 4 and poll them with MPI_Testall, then
 *            MPI_Test.
 *   gather   every thread posts 2 collectives and deposits the requests; thread 0 completes all
 *            of them (from every communicator) with one MPI_Waitall, then the posters check.
 *
 * Environment: CHECK_NB_THREADS_ITERS=<n> overrides the iteration count of each phase.
 * Output: failures (the first few), then from rank 0 "threads nonblocking: N cases on P ranks
 * right" (N: the cases of one rank) or "... N cases on P ranks, M failures"; exit code 1 on
 * failure. */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 3
#define NKINDS 4 /* allreduce, bcast, alltoall, allgatherv */
#define NMIXED 6 /* the requests thread 0 completes with MPI_Waitall in the mixed phase */
#define MAX_PRINT 25

enum { K_ALLREDUCE, K_BCAST, K_ALLTOALL, K_ALLGATHERV };
static const char* const kNames[NKINDS] = {"MPI_Iallreduce", "MPI_Ibcast", "MPI_Ialltoall",
                                           "MPI_Iallgatherv"};
enum { W_WAIT, W_TEST, W_WAITANY, W_HANDOFF_WAYS, W_WAITALL, W_TESTALL, W_GATHERED };
static const char* const kWays[] = {"MPI_Wait by the next thread",
                                    "MPI_Test loop by the next thread",
                                    "MPI_Waitany by the next thread",
                                    "",
                                    "MPI_Waitall by the poster",
                                    "MPI_Testall loop by the poster",
                                    "one MPI_Waitall of all threads' requests by thread 0"};
static const int kCounts[] = {0, 1, 7, 1000, 40000};
#define NCOUNTS ((int)(sizeof kCounts / sizeof kCounts[0]))

static int g_rank, g_size, g_iters = 30;
static MPI_Comm g_comms[NTHREADS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t g_phase_barrier;
static int g_printed;

/* One posted collective and what its check needs. */
typedef struct op {
  int kind, tid, it, count, dbl, inplace, root, way, rc;
  MPI_Comm comm;
  MPI_Datatype type;
  size_t esize, slen, rlen; /* bytes per element; send and receive buffer lengths in elements */
  void *sbuf, *rbuf, *ref;
  int *counts, *displs;
  MPI_Request req;
} op_t;

typedef struct {
  int tid;
  long long pass, fail;
} thr_t;

/* handoff: mailboxes of requests to complete, per thread, and the completions on this rank (all
   under g_lock) */
static op_t* g_mail[NTHREADS][NKINDS];
static int g_mail_n[NTHREADS];
static long g_completed;

/* gather phase: requests deposited, the generation thread 0 has completed (under g_lock) */
static op_t* g_deposit[NTHREADS * 2];
static int g_deposited, g_gathered_gen;

static void report(thr_t* t, int ok, const op_t* o, const char* fmt, ...) {
  if (ok) {
    t->pass++;
    return;
  }
  t->fail++;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&g_lock);
  if (g_printed++ < MAX_PRINT) {
    if (o)
      fprintf(stderr,
              "check_nonblocking_threads: FAIL rank=%d thread=%d iter=%d %s %s count=%d "
              "in_place=%d root=%d completed by %s: %s\n",
              g_rank, o->tid, o->it, kNames[o->kind], o->dbl ? "MPI_DOUBLE" : "MPI_INT", o->count,
              o->inplace, o->root, kWays[o->way], msg);
    else
      fprintf(stderr, "check_nonblocking_threads: FAIL rank=%d thread=%d: %s\n", g_rank, t->tid,
              msg);
  }
  pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------------ values */

/* deterministic small integers: sums over ranks are exact as int and as double */
static long long val(int rank, int tid, int it, int kind, int i) {
  return (long long)((rank + 1) * 7919 % 2003) + tid * 31 + it * 7 + kind * 3 + (i % 211) - 600;
}

/* element j of the block that rank src sends rank dst (alltoall) */
static long long a2a(int src, int dst, int tid, int it, int j) {
  return val(src, tid, it + 50 * (dst + 1), K_ALLTOALL, j);
}

static void put(const op_t* o, void* buf, size_t i, long long v) {
  if (o->dbl)
    ((double*)buf)[i] = (double)v * 0.5;
  else
    ((int*)buf)[i] = (int)v;
}

static int is(const op_t* o, const void* buf, size_t i, long long v) {
  if (o->dbl) return ((const double*)buf)[i] == (double)v * 0.5;
  return ((const int*)buf)[i] == (int)v;
}

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "check_nonblocking_threads: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* ------------------------------------------------------------------ one collective */

/* The send data of o (also what its send buffer must still hold afterwards). */
static void fill_send(const op_t* o, void* buf) {
  const int P = g_size, me = g_rank;
  switch (o->kind) {
    case K_ALLREDUCE:
      for (int i = 0; i < o->count; i++) put(o, buf, i, val(me, o->tid, o->it, o->kind, i));
      break;
    case K_ALLTOALL: {
      const int k = o->counts[0];
      for (int d = 0; d < P; d++)
        for (int j = 0; j < k; j++) put(o, buf, (size_t)d * k + j, a2a(me, d, o->tid, o->it, j));
      break;
    }
    case K_ALLGATHERV:
      for (int j = 0; j < o->counts[me]; j++) put(o, buf, j, val(me, o->tid, o->it, o->kind, j));
      break;
  }
}

/* Sets o up (buffers, counts, the initial receive buffer), computes the reference with the
   blocking PMPI call on the same input, and leaves o ready to post. */
static void prepare(op_t* o, int kind, int tid, int it, int count, int dbl, int inplace) {
  const int P = g_size, me = g_rank;
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->tid = tid;
  o->it = it;
  o->count = count;
  o->dbl = dbl;
  o->inplace = inplace;
  o->root = (it + tid) % P;
  o->comm = g_comms[tid];
  o->type = dbl ? MPI_DOUBLE : MPI_INT;
  o->esize = dbl ? sizeof(double) : sizeof(int);
  o->counts = xmalloc((size_t)P * sizeof(int));
  o->displs = xmalloc((size_t)P * sizeof(int));
  o->req = MPI_REQUEST_NULL;
  switch (kind) {
    case K_ALLREDUCE:
    case K_BCAST:
      o->slen = kind == K_ALLREDUCE ? (size_t)count : 0;
      o->rlen = (size_t)count + 1;
      break;
    case K_ALLTOALL: {
      const int k = count ? count / P + 1 : 0; /* per block */
      o->counts[0] = k;
      o->slen = (size_t)P * k;
      o->rlen = (size_t)P * k + 1;
      break;
    }
    case K_ALLGATHERV: {
      const int c = count ? count / P + 1 : 0;
      int at = 0;
      for (int r = P - 1; r >= 0; r--) { /* reverse rank order, a gap before each block */
        o->counts[r] = ((r + it + tid) % 3) * c;
        o->displs[r] = ++at;
        at += o->counts[r];
      }
      o->slen = (size_t)o->counts[me];
      o->rlen = (size_t)at + 1;
      break;
    }
  }
  o->sbuf = xmalloc(o->slen * o->esize);
  o->rbuf = xmalloc(o->rlen * o->esize);
  o->ref = xmalloc(o->rlen * o->esize);
  fill_send(o, o->sbuf);
  memset(o->rbuf, 0x5A, o->rlen * o->esize); /* guard and gaps: must stay so */
  if (kind == K_BCAST && me == o->root)
    for (int i = 0; i < count; i++) put(o, o->rbuf, i, val(o->root, tid, it, kind, i));
  if (inplace) /* the input in the receive buffer */
    memcpy(o->rbuf, o->sbuf, o->slen * o->esize);
  memcpy(o->ref, o->rbuf, o->rlen * o->esize);

  const void* in = inplace ? MPI_IN_PLACE : o->sbuf;
  switch (kind) {
    case K_ALLREDUCE:
      o->rc = PMPI_Allreduce(in, o->ref, count, o->type, MPI_SUM, o->comm);
      break;
    case K_BCAST:
      o->rc = PMPI_Bcast(o->ref, count, o->type, o->root, o->comm);
      break;
    case K_ALLTOALL:
      o->rc = PMPI_Alltoall(in, o->counts[0], o->type, o->ref, o->counts[0], o->type, o->comm);
      break;
    case K_ALLGATHERV:
      o->rc = PMPI_Allgatherv(in, o->counts[me], o->type, o->ref, o->counts, o->displs, o->type,
                              o->comm);
      break;
  }
}

static int post(op_t* o) {
  const void* in = o->inplace ? MPI_IN_PLACE : o->sbuf;
  switch (o->kind) {
    case K_ALLREDUCE:
      return MPI_Iallreduce(in, o->rbuf, o->count, o->type, MPI_SUM, o->comm, &o->req);
    case K_BCAST:
      return MPI_Ibcast(o->rbuf, o->count, o->type, o->root, o->comm, &o->req);
    case K_ALLTOALL:
      return MPI_Ialltoall(in, o->counts[0], o->type, o->rbuf, o->counts[0], o->type, o->comm,
                           &o->req);
    default:
      return MPI_Iallgatherv(in, o->counts[g_rank], o->type, o->rbuf, o->counts, o->displs, o->type,
                             o->comm, &o->req);
  }
}

/* Completes o's request in the way o->way (any thread); an error lands in o->rc. */
static void complete(op_t* o) {
  int rc = MPI_SUCCESS, flag = 0, idx = -1;
  switch (o->way) {
    case W_WAIT:
      rc = MPI_Wait(&o->req, MPI_STATUS_IGNORE);
      break;
    case W_TEST:
      while (rc == MPI_SUCCESS && !flag) {
        rc = MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE);
        if (!flag) sched_yield();
      }
      break;
    case W_WAITANY: {
      MPI_Request two[2] = {MPI_REQUEST_NULL, o->req};
      rc = MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
      o->req = two[1];
      if (rc == MPI_SUCCESS && idx != 1) rc = -1000 - idx; /* reported as a wrong index */
      break;
    }
  }
  if (rc != MPI_SUCCESS) o->rc = rc;
}

/* Checks o after completion and frees it. */
static void verify(thr_t* t, op_t* o) {
  const int P = g_size, me = g_rank;
  long bad = -1;
  if (o->rc != MPI_SUCCESS) {
    report(t, 0, o, "error %d (-1000 - i: MPI_Waitany returned index i)", o->rc);
    goto out;
  }
  if (o->req != MPI_REQUEST_NULL) {
    report(t, 0, o, "the request is not MPI_REQUEST_NULL after completion");
    goto out;
  }
  void* in = xmalloc(o->slen * o->esize);
  fill_send(o, in);
  int send_ok = memcmp(in, o->sbuf, o->slen * o->esize) == 0;
  free(in);
  if (!send_ok) {
    report(t, 0, o, "the send buffer changed");
    goto out;
  }
  switch (o->kind) { /* the analytic value */
    case K_ALLREDUCE:
      for (int i = 0; i < o->count && bad < 0; i++) {
        long long e = 0;
        for (int q = 0; q < P; q++) e += val(q, o->tid, o->it, o->kind, i);
        if (!is(o, o->rbuf, i, e)) bad = i;
      }
      break;
    case K_BCAST:
      for (int i = 0; i < o->count && bad < 0; i++)
        if (!is(o, o->rbuf, i, val(o->root, o->tid, o->it, o->kind, i))) bad = i;
      break;
    case K_ALLTOALL:
      for (int q = 0; q < P; q++)
        for (int j = 0; j < o->counts[0] && bad < 0; j++)
          if (!is(o, o->rbuf, (size_t)q * o->counts[0] + j, a2a(q, me, o->tid, o->it, j)))
            bad = (long)q * o->counts[0] + j;
      break;
    case K_ALLGATHERV:
      for (int q = 0; q < P; q++)
        for (int j = 0; j < o->counts[q] && bad < 0; j++)
          if (!is(o, o->rbuf, (size_t)o->displs[q] + j, val(q, o->tid, o->it, o->kind, j)))
            bad = (long)o->displs[q] + j;
      break;
  }
  if (bad >= 0) {
    report(t, 0, o, "wrong value at element %ld", bad);
    goto out;
  }
  if (memcmp(o->rbuf, o->ref, o->rlen * o->esize) != 0) {
    size_t i = 0;
    while (memcmp((char*)o->rbuf + i * o->esize, (char*)o->ref + i * o->esize, o->esize) == 0) i++;
    report(t, 0, o, "receive buffer differs from the blocking PMPI call's at element %zu of %zu", i,
           o->rlen);
    goto out;
  }
  report(t, 1, o, "");
out:
  free(o->sbuf);
  free(o->rbuf);
  free(o->ref);
  free(o->counts);
  free(o->displs);
}

static void check_post(thr_t* t, op_t* o) {
  int rc = post(o);
  if (rc != MPI_SUCCESS) {
    report(t, 0, o, "posting returned error %d", rc);
    MPI_Abort(MPI_COMM_WORLD, 3); /* the other ranks would hang */
  }
  if (o->rc != MPI_SUCCESS) {
    report(t, 0, o, "the reference PMPI call returned error %d", o->rc);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* ------------------------------------------------------------------ phases */

/* Completes the requests handed to thread tid until `target` requests of this rank are complete
   (under g_lock on entry and exit). */
static void serve_until(int tid, long target) {
  while (g_completed < target) {
    if (g_mail_n[tid] > 0) {
      op_t* o = g_mail[tid][--g_mail_n[tid]]; /* the last handed first */
      pthread_mutex_unlock(&g_lock);
      complete(o);
      pthread_mutex_lock(&g_lock);
      g_completed++;
      pthread_cond_broadcast(&g_cond);
      continue;
    }
    pthread_cond_wait(&g_cond, &g_lock);
  }
}

static void handoff_phase(thr_t* t) {
  const int tid = t->tid, next = (tid + 1) % NTHREADS;
  for (int it = 0; it < g_iters; it++) {
    op_t ops[NKINDS];
    for (int k = 0; k < NKINDS; k++) {
      int inplace = (k == K_ALLREDUCE && it % 2) || (k == K_ALLTOALL && it % 3 == 0);
      prepare(&ops[k], k, tid, it, kCounts[(it + tid + k) % NCOUNTS], (it + tid + k) % 2, inplace);
      ops[k].way = (it + tid + k) % W_HANDOFF_WAYS;
    }
    for (int k = 0; k < NKINDS; k++) check_post(t, &ops[k]);
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < NKINDS; k++) g_mail[next][g_mail_n[next]++] = &ops[k];
    pthread_cond_broadcast(&g_cond);
    /* every request of this iteration on this rank, not only this thread's: see the top */
    serve_until(tid, (long)(it + 1) * NTHREADS * NKINDS);
    pthread_mutex_unlock(&g_lock);
    for (int k = 0; k < NKINDS; k++) verify(t, &ops[k]);
  }
}

/* Blocking collectives (the intercepted MPI_* calls) on this thread's communicator, checked
   analytically, while other threads complete nonblocking ones. */
static void blocking_round(thr_t* t, int it) {
  const int P = g_size, me = g_rank, tid = t->tid, n = kCounts[it % NCOUNTS];
  const int k = n / P + 1;
  int* s = xmalloc(((size_t)n + (size_t)P * k + 1) * sizeof(int));
  int* r = xmalloc(((size_t)n + (size_t)P * k + 1) * sizeof(int));
  long bad = -1;
  for (int i = 0; i < n; i++) s[i] = (int)val(me, tid, it, 9, i);
  int rc = MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, g_comms[tid]);
  for (int i = 0; i < n && bad < 0; i++) {
    long long e = 0;
    for (int q = 0; q < P; q++) e += val(q, tid, it, 9, i);
    if (r[i] != (int)e) bad = i;
  }
  report(t, rc == MPI_SUCCESS && bad < 0, NULL,
         "blocking MPI_Allreduce iter %d: rc %d, element %ld", it, rc, bad);
  const int root = (it + 1) % P;
  for (int i = 0; i < n; i++) r[i] = me == root ? (int)val(root, tid, it, 10, i) : -1;
  rc = MPI_Bcast(r, n, MPI_INT, root, g_comms[tid]);
  bad = -1;
  for (int i = 0; i < n && bad < 0; i++)
    if (r[i] != (int)val(root, tid, it, 10, i)) bad = i;
  report(t, rc == MPI_SUCCESS && bad < 0, NULL, "blocking MPI_Bcast iter %d: rc %d, element %ld",
         it, rc, bad);
  for (int d = 0; d < P; d++)
    for (int j = 0; j < k; j++) s[(size_t)d * k + j] = (int)a2a(me, d, tid, it + 1000, j);
  rc = MPI_Alltoall(s, k, MPI_INT, r, k, MPI_INT, g_comms[tid]);
  bad = -1;
  for (int q = 0; q < P; q++)
    for (int j = 0; j < k && bad < 0; j++)
      if (r[(size_t)q * k + j] != (int)a2a(q, me, tid, it + 1000, j)) bad = (long)q * k + j;
  report(t, rc == MPI_SUCCESS && bad < 0, NULL, "blocking MPI_Alltoall iter %d: rc %d, element %ld",
         it, rc, bad);
  free(s);
  free(r);
}

static void mixed_phase(thr_t* t) {
  const int tid = t->tid;
  for (int it = 0; it < g_iters; it++) {
    if (tid == 1) {
      blocking_round(t, it);
      continue;
    }
    const int nops = tid == 0 ? NMIXED : NKINDS;
    op_t ops[NMIXED];
    MPI_Request reqs[NMIXED + 1];
    for (int k = 0; k < nops; k++) {
      const int kind = k % NKINDS;
      prepare(&ops[k], kind, tid, it + 100, kCounts[(it + k) % NCOUNTS], (it + k) % 2,
              kind == K_ALLREDUCE && k >= NKINDS);
      ops[k].way = tid == 0 ? W_WAITALL : W_TESTALL;
    }
    for (int k = 0; k < nops; k++) check_post(t, &ops[k]);
    int rc = MPI_SUCCESS;
    if (tid == 0) {
      /* reqs: the first 3 requests, MPI_REQUEST_NULL, the others */
      for (int k = 0, j = 0; k <= nops; k++) reqs[k] = k == 3 ? MPI_REQUEST_NULL : ops[j++].req;
      rc = MPI_Waitall(nops + 1, reqs, MPI_STATUSES_IGNORE);
      for (int k = 0, j = 0; k <= nops; k++)
        if (k != 3)
          ops[j++].req = reqs[k];
        else if (reqs[k] != MPI_REQUEST_NULL)
          report(t, 0, NULL, "MPI_Waitall changed an MPI_REQUEST_NULL");
    } else {
      /* MPI_Testall polls on half of them, then MPI_Test on each of the rest, last first */
      int flag = 0, half = nops / 2;
      for (int k = 0; k < half; k++) reqs[k] = ops[k].req;
      while (rc == MPI_SUCCESS && !flag) {
        rc = MPI_Testall(half, reqs, &flag, MPI_STATUSES_IGNORE);
        if (!flag) sched_yield();
      }
      for (int k = 0; k < half; k++) ops[k].req = reqs[k];
      for (int k = nops - 1; k >= half && rc == MPI_SUCCESS; k--) {
        ops[k].way = W_TEST;
        flag = 0;
        while (rc == MPI_SUCCESS && !flag) {
          rc = MPI_Test(&ops[k].req, &flag, MPI_STATUS_IGNORE);
          if (!flag) sched_yield();
        }
      }
    }
    for (int k = 0; k < nops; k++) {
      if (rc != MPI_SUCCESS) ops[k].rc = rc;
      verify(t, &ops[k]);
    }
  }
}

static void gather_phase(thr_t* t) {
  const int tid = t->tid;
  for (int it = 0; it < g_iters; it++) {
    op_t ops[2];
    for (int k = 0; k < 2; k++) {
      const int kind = (it + tid + k) % NKINDS;
      prepare(&ops[k], kind, tid, it + 200, kCounts[(it + 2 * k + tid) % NCOUNTS], k,
              kind == K_ALLTOALL && it % 2);
      ops[k].way = W_GATHERED;
    }
    for (int k = 0; k < 2; k++) check_post(t, &ops[k]);
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < 2; k++) g_deposit[g_deposited++] = &ops[k];
    pthread_cond_broadcast(&g_cond);
    if (tid == 0) {
      while (g_deposited < 2 * NTHREADS) pthread_cond_wait(&g_cond, &g_lock);
      pthread_mutex_unlock(&g_lock);
      /* all of them and MPI_REQUEST_NULL first, from every thread's communicator */
      MPI_Request reqs[2 * NTHREADS + 1];
      reqs[0] = MPI_REQUEST_NULL;
      for (int j = 0; j < 2 * NTHREADS; j++) reqs[j + 1] = g_deposit[j]->req;
      int rc = MPI_Waitall(2 * NTHREADS + 1, reqs, MPI_STATUSES_IGNORE);
      for (int j = 0; j < 2 * NTHREADS; j++) {
        g_deposit[j]->req = reqs[j + 1];
        if (rc != MPI_SUCCESS) g_deposit[j]->rc = rc;
      }
      pthread_mutex_lock(&g_lock);
      g_deposited = 0;
      g_gathered_gen = it + 1;
      pthread_cond_broadcast(&g_cond);
    } else {
      while (g_gathered_gen < it + 1) pthread_cond_wait(&g_cond, &g_lock);
    }
    pthread_mutex_unlock(&g_lock);
    for (int k = 0; k < 2; k++) verify(t, &ops[k]);
  }
}

static void* thread_main(void* arg) {
  thr_t* t = arg;
  handoff_phase(t);
  pthread_barrier_wait(&g_phase_barrier);
  mixed_phase(t);
  pthread_barrier_wait(&g_phase_barrier);
  gather_phase(t);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (g_rank == 0)
      printf("threads nonblocking: MPI_THREAD_MULTIPLE not provided (provided=%d)\n", provided);
    MPI_Finalize();
    return 1;
  }
  const char* env = getenv("CHECK_NB_THREADS_ITERS");
  if (env && atoi(env) > 0) g_iters = atoi(env);

  thr_t thr[NTHREADS];
  pthread_t tids[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    memset(&thr[i], 0, sizeof thr[i]);
    thr[i].tid = i;
    MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[i]);
    MPI_Comm_set_errhandler(g_comms[i], MPI_ERRORS_RETURN);
  }
  pthread_barrier_init(&g_phase_barrier, NULL, NTHREADS);
  for (int i = 0; i < NTHREADS; i++)
    if (pthread_create(&tids[i], NULL, thread_main, &thr[i]) != 0) {
      fprintf(stderr, "check_nonblocking_threads: pthread_create failed\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  long long mine[2] = {0, 0}, tot[2] = {0, 0};
  for (int i = 0; i < NTHREADS; i++) {
    pthread_join(tids[i], NULL);
    mine[0] += thr[i].pass;
    mine[1] += thr[i].fail;
    MPI_Comm_free(&g_comms[i]);
  }
  pthread_barrier_destroy(&g_phase_barrier);
  PMPI_Allreduce(mine, tot, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    if (tot[1] == 0)
      printf("threads nonblocking: %lld cases on %d ranks right\n", mine[0], g_size);
    else
      printf("threads nonblocking: %lld cases on %d ranks, %lld failures\n", mine[0] + mine[1],
             g_size, tot[1]);
  }
  fflush(stdout);
  MPI_Finalize();
  return tot[1] ? 1 : 0;
}
