/* check_nonblocking.c: the nonblocking collectives in an unmodified MPI program, and the
 * completion functions on their requests. Every result is compared with what the MPI library's
 * blocking collective (PMPI_*, never intercepted) computes on the same fresh pseudo-random input:
 * exactly (integers, and floating-point values that are small integers, so that every order of
 * reduction gives the same bits), or within a tolerance (one group of real-valued sums). Send
 * buffers must stay unchanged; one element past every receive buffer and the gaps of the vector
 * layouts must stay untouched.
 *
 * Modes (argv[1]):
 *
 * all (default): the sections colls, completion and order below, in that order.
 *
 * colls: MPI_Iallreduce, Ireduce, Ireduce_scatter, Ireduce_scatter_block, Iscan, Iexscan over
 *   every predefined (type, op) pair of MPI_SIGNED_CHAR, MPI_INT, MPI_UNSIGNED, MPI_LONG_LONG,
 *   MPI_FLOAT, MPI_DOUBLE (SUM PROD MAX MIN; BAND BOR BXOR on integers) and MPI_DOUBLE_INT
 *   (MINLOC MAXLOC); Ibcast, Iallgather(v), Ialltoall(v), Igather(v), Iscatter(v) on those types
 *   and MPI_CHAR; Ibarrier. Counts 0, 1, 37, 1001 and large (70000 for the reductions); every
 *   root; MPI_IN_PLACE wherever the standard allows it (at the root only for the rooted calls; on
 *   the odd ranks only as well for Iscan and Iexscan), with the insignificant send count and type
 *   poisoned; irregular vector counts with a zero block, displacements in reverse rank order with
 *   gaps. On MPI_COMM_WORLD, a split into halves and a split in reverse rank order. Each request
 *   is completed by one of the nine completion functions, in turn and differently on each rank.
 *
 * completion: the completion functions on arrays that mix collective requests, the program's own
 *   MPI_Isend/MPI_Irecv between neighbours and MPI_REQUEST_NULL, with and without status arrays:
 *   handles MPI_REQUEST_NULL afterwards, empty statuses for null entries, MPI_UNDEFINED from
 *   Waitany/Testany/Waitsome/Testsome on arrays of null requests; MPI_Testall, Testany, Testsome,
 *   Test and Request_get_status on a receive that cannot have completed yet next to a collective
 *   request that has (flag 0, handles unchanged).
 *
 * order: many nonblocking collectives outstanding on one communicator, completed in reverse order,
 *   in a random order common to all ranks and in each rank's own; blocking MPI_Allreduce and
 *   MPI_Bcast while nonblocking ones are outstanding; operations on two communicators interleaved
 *   and completed in opposite orders on different ranks.
 *
 * progress: the progress rule. Rank 0 starts MPI_Iallreduce (Ibcast, Ialltoall) and then blocks in
 *   MPI_Recv, or in MPI_Barrier on another or the same communicator, until the other ranks, which
 *   MPI_Wait on that collective first, send or enter the barrier; a rank computes for 20 ms calling
 *   MPI_Test now and then while its peers MPI_Wait. An implementation that progresses only inside
 *   MPI_Wait/MPI_Test (or a blocking collective that does not drive pending requests) deadlocks.
 *   "progress K" runs the K-th of these six variants only.
 *
 * many: 256 MPI_Iallreduce of 1024 floats outstanding, one buffer each, then one MPI_Waitall (the
 *   "gradient fusion" pattern), and variants (in place, other completions, varied sizes, 1024 tiny
 *   ones).
 *
 * fresh: communicators used only with nonblocking calls (a duplicate, a split): MPI_Iallreduce,
 *   some with a user-defined operation, and once an MPI_Comm_dup of the communicator while they
 *   are outstanding; every result against PMPI_Allreduce.
 *
 * fusion (not part of all; run with OVERPASS_DETERMINISTIC=1 and OVERPASS_FUSION): bursts of
 *   MPI_Iallreduce of real-valued doubles and floats of varied lengths, posted with pauses that
 *   differ from rank to rank, then MPI_Waitall: every result bitwise the serial rank-order sum.
 *
 * cancel, free (not part of all): erroneous programs, MPI_Cancel or MPI_Request_free on an
 *   MPI_Iallreduce request. A second argument "return" sets MPI_ERRORS_RETURN on MPI_COMM_WORLD
 *   first. These modes exit non-zero if and only if the error was reported (an error code returned,
 *   or the job aborted by the error handler), and print what the call returned.
 *
 * Output: failures on stderr (the first few per rank, with the seed), then rank 0 prints
 * "nonblocking MODE: N cases on P ranks right" or "nonblocking MODE: F of N cases wrong on P
 * ranks"; exit status 1 on any failure. A phase that makes no progress for CHECK_WATCHDOG seconds
 * (default 150) ends the program with exit status 3, naming the phase.
 * Environment: CHECK_SEED=<integer> overrides the base seed. */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_wrank, g_wsize;
static uint64_t g_seed = 0x6e6f6e626c6bULL;
static long g_pass, g_fail;
static int g_printed;
static const char* volatile g_phase = "init";
static unsigned g_watchdog = 150;
enum { kMaxPrint = 20, kCanary = 1 };

static void on_alarm(int sig) {
  (void)sig;
  char msg[256];
  int n = snprintf(msg, sizeof msg, "nonblocking: rank %d stuck for %u s in phase '%s'\n", g_wrank,
                   g_watchdog, g_phase);
  if (n > 0) (void)!write(2, msg, (size_t)n);
  _exit(3);
}

static void phase(const char* name) {
  g_phase = name;
  alarm(g_watchdog);
}

static void expect(int ok, const char* fmt, ...) {
  if (ok) {
    ++g_pass;
    return;
  }
  ++g_fail;
  if (g_printed++ >= kMaxPrint) return;
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "nonblocking: FAIL rank %d seed %llu phase %s: %s\n", g_wrank,
          (unsigned long long)g_seed, g_phase, msg);
}

static const char* errstr(int rc) {
  static char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (rc == MPI_SUCCESS) return "MPI_SUCCESS";
  if (PMPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "error %d", rc);
  return s;
}

/* ---- pseudo-random input (splitmix64), reseeded per case ------------------------------------- */

static uint64_t g_rng;
static uint64_t next64(void) {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static void reseed(uint64_t id) {
  g_rng = g_seed ^ (id * 0x100000001b3ULL) ^ ((uint64_t)(g_wrank + 1) << 52);
  next64();
}
static int rnd(int lo, int hi) {
  return lo + (int)(next64() % (uint64_t)(hi - lo + 1));
}

/* ---- types and ops --------------------------------------------------------------------------- */

typedef struct {
  double v;
  int i;
} di_t;

enum { K_I8, K_CHAR, K_I32, K_U32, K_I64, K_F32, K_F64, K_DI, K_TYPES };
typedef struct {
  MPI_Datatype dt;
  const char* name;
  int kind;
  int size;
} type_t;
static type_t g_types[K_TYPES];

/* How input values are drawn: each reduction gets values for which every order of evaluation
   gives the same bits and nothing overflows (PROD: -1, 1, 2 while 2^p fits into int8). */
enum { M_MOVE, M_SUM, M_PROD, M_MINMAX, M_BAND, M_BOR, M_BXOR, M_LOC, M_REAL };
enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_MINLOC, O_MAXLOC, O_OPS };
typedef struct {
  MPI_Op op;
  const char* name;
  int mode;
} op_t;
static op_t g_ops[O_OPS];

static void init_types(void) {
  const type_t t[K_TYPES] = {{MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", K_I8, 1},
                             {MPI_CHAR, "MPI_CHAR", K_CHAR, 1},
                             {MPI_INT, "MPI_INT", K_I32, 4},
                             {MPI_UNSIGNED, "MPI_UNSIGNED", K_U32, 4},
                             {MPI_LONG_LONG, "MPI_LONG_LONG", K_I64, 8},
                             {MPI_FLOAT, "MPI_FLOAT", K_F32, 4},
                             {MPI_DOUBLE, "MPI_DOUBLE", K_F64, 8},
                             {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", K_DI, 0}};
  memcpy(g_types, t, sizeof t);
  MPI_Aint lb, extent;
  MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent);
  g_types[K_DI].size = (int)extent;
  expect(extent == (MPI_Aint)sizeof(di_t),
         "MPI_DOUBLE_INT has extent %ld, struct {double; int} %zu", (long)extent, sizeof(di_t));
  const op_t o[O_OPS] = {{MPI_SUM, "MPI_SUM", M_SUM},      {MPI_PROD, "MPI_PROD", M_PROD},
                         {MPI_MAX, "MPI_MAX", M_MINMAX},   {MPI_MIN, "MPI_MIN", M_MINMAX},
                         {MPI_BAND, "MPI_BAND", M_BAND},   {MPI_BOR, "MPI_BOR", M_BOR},
                         {MPI_BXOR, "MPI_BXOR", M_BXOR},   {MPI_MINLOC, "MPI_MINLOC", M_LOC},
                         {MPI_MAXLOC, "MPI_MAXLOC", M_LOC}};
  memcpy(g_ops, o, sizeof o);
}

/* The (type, op) pairs the standard allows, among these. */
static int valid_pair(int k, int o) {
  if (k == K_DI) return o == O_MINLOC || o == O_MAXLOC;
  if (k == K_CHAR || o == O_MINLOC || o == O_MAXLOC) return 0;
  if (k == K_F32 || k == K_F64) return o <= O_MIN;
  return 1;
}

static int prod_hi(void) {
  return g_wsize <= 6 ? 2 : 1;
}
static int64_t ival(int mode) {
  static const int64_t prodv[] = {-1, 1, 2};
  switch (mode) {
    case M_SUM:
      return rnd(-3, 3);
    case M_PROD:
      return prodv[rnd(0, prod_hi())];
    case M_MINMAX:
      return rnd(-60, 60);
    case M_BAND:
      return (int64_t)(next64() | next64());
    case M_BOR:
      return (int64_t)(next64() & next64());
    case M_LOC:
      return rnd(-2, 2);
    default:
      return (int64_t)next64();
  }
}
static uint64_t uval(int mode) {
  switch (mode) {
    case M_SUM:
      return (uint64_t)rnd(0, 6);
    case M_PROD:
      return (uint64_t)rnd(1, prod_hi());
    case M_MINMAX:
      return (uint64_t)rnd(0, 100);
    default:
      return (uint64_t)ival(mode);
  }
}
static double fval(int mode) {
  static const double prodv[] = {-1.0, 1.0, 2.0};
  switch (mode) {
    case M_SUM:
      return rnd(-3, 3);
    case M_PROD:
      return prodv[rnd(0, prod_hi())];
    case M_MINMAX:
      return rnd(-20, 20) / 2.0;
    case M_LOC:
      return rnd(-2, 2);
    case M_REAL:
      return (double)(next64() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    default:
      return rnd(-4000, 4000) / 8.0;
  }
}

static void fill(char* buf, size_t n, const type_t* t, int mode) {
  for (size_t i = 0; i < n; ++i) {
    char* p = buf + i * (size_t)t->size;
    switch (t->kind) {
      case K_I8:
        *(int8_t*)p = (int8_t)ival(mode);
        break;
      case K_CHAR:
        *p = (char)ival(mode);
        break;
      case K_I32:
        *(int32_t*)p = (int32_t)ival(mode);
        break;
      case K_U32:
        *(uint32_t*)p = (uint32_t)uval(mode);
        break;
      case K_I64:
        *(int64_t*)p = ival(mode);
        break;
      case K_F32:
        *(float*)p = (float)fval(mode);
        break;
      case K_F64:
        *(double*)p = fval(mode);
        break;
      default: {
        di_t x;
        memset(&x, 0, sizeof x);
        x.v = fval(M_LOC);
        x.i = rnd(0, 3);
        memcpy(p, &x, sizeof x);
      }
    }
  }
}

static void show(char* out, size_t len, const char* p, const type_t* t) {
  switch (t->kind) {
    case K_I8:
      snprintf(out, len, "%d", *(const int8_t*)p);
      break;
    case K_CHAR:
      snprintf(out, len, "%d", *(const char*)p);
      break;
    case K_I32:
      snprintf(out, len, "%d", *(const int32_t*)p);
      break;
    case K_U32:
      snprintf(out, len, "%u", *(const uint32_t*)p);
      break;
    case K_I64:
      snprintf(out, len, "%lld", (long long)*(const int64_t*)p);
      break;
    case K_F32:
      snprintf(out, len, "%.9g", *(const float*)p);
      break;
    case K_F64:
      snprintf(out, len, "%.17g", *(const double*)p);
      break;
    default: {
      di_t x;
      memcpy(&x, p, sizeof x);
      snprintf(out, len, "(%g,%d)", x.v, x.i);
    }
  }
}

/* The first element at which a and b differ (bitwise; the fields only for MPI_DOUBLE_INT, whose
   padding nobody defines), or -1. With tol > 0, floating-point elements may differ by tol
   relative. */
static long first_diff(const char* a, const char* b, size_t n, const type_t* t, double tol) {
  const size_t sz = (size_t)t->size;
  if (t->kind != K_DI && tol == 0 && memcmp(a, b, n * sz) == 0) return -1;
  for (size_t i = 0; i < n; ++i) {
    const char *x = a + i * sz, *y = b + i * sz;
    if (t->kind == K_DI) {
      di_t u, v;
      memcpy(&u, x, sizeof u);
      memcpy(&v, y, sizeof v);
      if (memcmp(&u.v, &v.v, sizeof u.v) != 0 || u.i != v.i) return (long)i;
    } else if (tol > 0 && (t->kind == K_F32 || t->kind == K_F64)) {
      const double u = t->kind == K_F32 ? *(const float*)x : *(const double*)x;
      const double v = t->kind == K_F32 ? *(const float*)y : *(const double*)y;
      const double scale = v < 0 ? (v < -1 ? -v : 1) : (v > 1 ? v : 1);
      if (!(u - v <= tol * scale && v - u <= tol * scale)) return (long)i;
    } else if (memcmp(x, y, sz) != 0) {
      return (long)i;
    }
  }
  return -1;
}

/* ---- communicators --------------------------------------------------------------------------- */

typedef struct {
  MPI_Comm comm;
  const char* name;
} comm_t;
enum { kComms = 3 };
static comm_t g_comms[kComms];

/* ---- one collective call: its arguments, buffers and reference ------------------------------- */

enum {
  C_ALLREDUCE,
  C_REDUCE,
  C_REDUCE_SCATTER,
  C_REDUCE_SCATTER_BLOCK,
  C_SCAN,
  C_EXSCAN,
  C_BCAST,
  C_ALLGATHER,
  C_ALLGATHERV,
  C_ALLTOALL,
  C_ALLTOALLV,
  C_GATHER,
  C_GATHERV,
  C_SCATTER,
  C_SCATTERV,
  C_BARRIER,
  C_COLLS
};
static const char* const kCollName[C_COLLS] = {
    "MPI_Iallreduce",  "MPI_Ireduce",   "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block",
    "MPI_Iscan",       "MPI_Iexscan",   "MPI_Ibcast",          "MPI_Iallgather",
    "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv",      "MPI_Igather",
    "MPI_Igatherv",    "MPI_Iscatter",  "MPI_Iscatterv",       "MPI_Ibarrier"};
static int is_reduction(int coll) {
  return coll <= C_EXSCAN;
}
static int is_rooted(int coll) {
  return coll == C_REDUCE || coll == C_BCAST || coll == C_GATHER || coll == C_GATHERV ||
         coll == C_SCATTER || coll == C_SCATTERV;
}

typedef struct {
  int coll;
  const comm_t* cm;
  int rank, size;
  const type_t* t;
  const op_t* o; /* NULL: data movement */
  int count, root;
  int inplace; /* 0 no, 1 yes (at the root only for rooted calls), 2 on odd ranks (scan, exscan) */
  double tol;
  int *sc, *sd, *rc, *rd; /* per-rank send/receive counts and displacements */
  size_t sn, rn;          /* elements of the send and receive buffers (without the canary) */
  char *s[2], *r[2];      /* [0]: the nonblocking call's, [1]: the reference's */
  size_t cmp_n;           /* elements of r compared (from the start) */
  int significant;        /* r holds a defined result on this rank */
  long id;
} case_t;

static long g_cases; /* cases set up so far: the same sequence on every rank */

static int in_place_here(const case_t* c) {
  if (!c->inplace) return 0;
  switch (c->coll) {
    case C_REDUCE:
    case C_GATHER:
    case C_GATHERV:
    case C_SCATTER:
    case C_SCATTERV:
      return c->rank == c->root;
    case C_SCAN:
    case C_EXSCAN:
      return c->inplace == 1 || c->rank % 2 == 1;
    case C_BCAST:
    case C_BARRIER:
      return 0;
    default:
      return 1;
  }
}

/* Irregular counts of the vector calls: a zero block (rank root + 1), the others count + 0..4. */
static int vcount(const case_t* c, int q) {
  if (c->count == 0) return 0;
  if (c->size > 1 && q == (c->root + 1) % c->size) return 0;
  return c->count + (7 * q) % 5;
}
/* Alltoallv: what rank `from` sends rank `to`; symmetric in place (as the standard requires). */
static int a2av(const case_t* c, int from, int to) {
  const int n = c->count;
  if (n == 0) return 0;
  if (c->inplace) return (from * to + from + to) % 5 == 2 ? 0 : n + (from + to) % 3;
  return (2 * from + to) % 5 == 3 ? 0 : n + (3 * from + 2 * to) % 7;
}
/* Blocks in reverse rank order with a gap of one or two elements after each; the extent. */
static size_t reversed(int p, const int* counts, int* displs) {
  size_t at = 0;
  for (int q = p - 1; q >= 0; --q) {
    displs[q] = (int)at;
    at += (size_t)counts[q] + 1 + q % 2;
  }
  return at;
}

static void case_init(case_t* c, int coll, const comm_t* cm, int kind, int opi, int count, int root,
                      int inplace) {
  memset(c, 0, sizeof *c);
  c->coll = coll;
  c->cm = cm;
  MPI_Comm_rank(cm->comm, &c->rank);
  MPI_Comm_size(cm->comm, &c->size);
  c->t = &g_types[kind];
  c->o = opi >= 0 ? &g_ops[opi] : NULL;
  c->count = count;
  c->root = root % c->size;
  c->inplace = inplace;
  c->id = g_cases++;
  c->significant = 1;
  const int p = c->size, me = c->rank;
  const size_t n = (size_t)count;
  c->sc = calloc((size_t)p, sizeof(int));
  c->sd = calloc((size_t)p, sizeof(int));
  c->rc = calloc((size_t)p, sizeof(int));
  c->rd = calloc((size_t)p, sizeof(int));
  size_t sn = 0, rn = 0, cmp = (size_t)-1;
  switch (coll) {
    case C_ALLREDUCE:
    case C_SCAN:
      sn = rn = n;
      break;
    case C_EXSCAN:
      sn = rn = n;
      c->significant = me != 0;
      break;
    case C_REDUCE:
      sn = rn = n;
      c->significant = me == c->root;
      break;
    case C_REDUCE_SCATTER: {
      size_t total = 0;
      for (int q = 0; q < p; ++q) total += (size_t)(c->rc[q] = vcount(c, q));
      sn = total;
      rn = inplace ? total : (size_t)c->rc[me];
      if (inplace) cmp = (size_t)c->rc[me]; /* the rest of the buffer is undefined */
      break;
    }
    case C_REDUCE_SCATTER_BLOCK:
      sn = n * (size_t)p;
      rn = inplace ? n * (size_t)p : n;
      if (inplace) cmp = n;
      break;
    case C_BCAST:
      rn = n;
      break;
    case C_ALLGATHER:
      sn = n;
      rn = n * (size_t)p;
      break;
    case C_ALLGATHERV:
      for (int q = 0; q < p; ++q) c->rc[q] = vcount(c, q);
      rn = reversed(p, c->rc, c->rd);
      sn = (size_t)c->rc[me];
      break;
    case C_ALLTOALL:
      sn = rn = n * (size_t)p;
      break;
    case C_ALLTOALLV:
      for (int q = 0; q < p; ++q) {
        c->sc[q] = a2av(c, me, q);
        c->rc[q] = a2av(c, q, me);
      }
      sn = reversed(p, c->sc, c->sd);
      rn = reversed(p, c->rc, c->rd);
      break;
    case C_GATHER:
      sn = n;
      rn = n * (size_t)p;
      c->significant = me == c->root;
      break;
    case C_GATHERV:
      for (int q = 0; q < p; ++q) c->rc[q] = vcount(c, q);
      rn = reversed(p, c->rc, c->rd);
      sn = (size_t)c->rc[me];
      c->significant = me == c->root;
      break;
    case C_SCATTER:
      sn = n * (size_t)p;
      rn = n;
      break;
    case C_SCATTERV:
      for (int q = 0; q < p; ++q) c->sc[q] = vcount(c, q);
      sn = reversed(p, c->sc, c->sd);
      rn = (size_t)c->sc[me];
      break;
    default:
      c->significant = 0;
      break;
  }
  c->sn = sn;
  c->rn = rn;
  c->cmp_n = cmp == (size_t)-1 ? rn + kCanary : cmp;
  const size_t sz = (size_t)c->t->size;
  const int mode = c->o ? c->o->mode : M_MOVE;
  reseed((uint64_t)c->id);
  for (int w = 0; w < 2; ++w) {
    c->s[w] = calloc(sn + kCanary, sz);
    c->r[w] = calloc(rn + kCanary, sz);
  }
  /* The receive buffer holds input too (in place), or values that must be overwritten or kept. */
  fill(c->s[0], sn + kCanary, c->t, mode);
  fill(c->r[0], rn + kCanary, c->t, mode);
  memcpy(c->s[1], c->s[0], (sn + kCanary) * sz);
  memcpy(c->r[1], c->r[0], (rn + kCanary) * sz);
}

static void case_free(case_t* c) {
  for (int w = 0; w < 2; ++w) {
    free(c->s[w]);
    free(c->r[w]);
  }
  free(c->sc);
  free(c->sd);
  free(c->rc);
  free(c->rd);
}

static void describe(const case_t* c, char* out, size_t len) {
  snprintf(out, len, "%s on %s (case %ld, %s%s%s, count %d, root %d, in place %d)",
           kCollName[c->coll], c->cm->name, c->id, c->coll == C_BARRIER ? "-" : c->t->name,
           c->o ? " " : "", c->o ? c->o->name : "", c->count, c->root, c->inplace);
}

/* The call of case c: the nonblocking MPI_I* on the test buffers when req is given, else the
   blocking PMPI_* on the reference buffers. With MPI_IN_PLACE the insignificant send count and
   type are poisoned (0 and MPI_DATATYPE_NULL), as the standard lets a program do. */
static int issue(const case_t* c, MPI_Request* req) {
  const int w = req ? 0 : 1, ip = in_place_here(c);
  void* s = c->s[w];
  void* r = c->r[w];
  void* sip = ip ? MPI_IN_PLACE : s;
  const MPI_Datatype dt = c->t->dt, sdt = ip ? MPI_DATATYPE_NULL : dt;
  const MPI_Op op = c->o ? c->o->op : MPI_OP_NULL;
  const int n = c->count, root = c->root, me = c->rank;
  const MPI_Comm comm = c->cm->comm;
  switch (c->coll) {
    case C_ALLREDUCE:
      return req ? MPI_Iallreduce(sip, r, n, dt, op, comm, req)
                 : PMPI_Allreduce(sip, r, n, dt, op, comm);
    case C_REDUCE:
      return req ? MPI_Ireduce(sip, r, n, dt, op, root, comm, req)
                 : PMPI_Reduce(sip, r, n, dt, op, root, comm);
    case C_REDUCE_SCATTER:
      return req ? MPI_Ireduce_scatter(sip, r, c->rc, dt, op, comm, req)
                 : PMPI_Reduce_scatter(sip, r, c->rc, dt, op, comm);
    case C_REDUCE_SCATTER_BLOCK:
      return req ? MPI_Ireduce_scatter_block(sip, r, n, dt, op, comm, req)
                 : PMPI_Reduce_scatter_block(sip, r, n, dt, op, comm);
    case C_SCAN:
      return req ? MPI_Iscan(sip, r, n, dt, op, comm, req) : PMPI_Scan(sip, r, n, dt, op, comm);
    case C_EXSCAN:
      return req ? MPI_Iexscan(sip, r, n, dt, op, comm, req) : PMPI_Exscan(sip, r, n, dt, op, comm);
    case C_BCAST:
      return req ? MPI_Ibcast(r, n, dt, root, comm, req) : PMPI_Bcast(r, n, dt, root, comm);
    case C_ALLGATHER:
      return req ? MPI_Iallgather(sip, ip ? 0 : n, sdt, r, n, dt, comm, req)
                 : PMPI_Allgather(sip, ip ? 0 : n, sdt, r, n, dt, comm);
    case C_ALLGATHERV:
      return req ? MPI_Iallgatherv(sip, ip ? 0 : c->rc[me], sdt, r, c->rc, c->rd, dt, comm, req)
                 : PMPI_Allgatherv(sip, ip ? 0 : c->rc[me], sdt, r, c->rc, c->rd, dt, comm);
    case C_ALLTOALL:
      return req ? MPI_Ialltoall(sip, ip ? 0 : n, sdt, r, n, dt, comm, req)
                 : PMPI_Alltoall(sip, ip ? 0 : n, sdt, r, n, dt, comm);
    case C_ALLTOALLV:
      return req ? MPI_Ialltoallv(sip, c->sc, c->sd, sdt, r, c->rc, c->rd, dt, comm, req)
                 : PMPI_Alltoallv(sip, c->sc, c->sd, sdt, r, c->rc, c->rd, dt, comm);
    case C_GATHER:
      return req ? MPI_Igather(sip, ip ? 0 : n, sdt, r, n, dt, root, comm, req)
                 : PMPI_Gather(sip, ip ? 0 : n, sdt, r, n, dt, root, comm);
    case C_GATHERV:
      return req ? MPI_Igatherv(sip, ip ? 0 : c->rc[me], sdt, r, c->rc, c->rd, dt, root, comm, req)
                 : PMPI_Gatherv(sip, ip ? 0 : c->rc[me], sdt, r, c->rc, c->rd, dt, root, comm);
    case C_SCATTER:
      return req ? MPI_Iscatter(s, n, dt, ip ? MPI_IN_PLACE : r, ip ? 0 : n, sdt, root, comm, req)
                 : PMPI_Scatter(s, n, dt, ip ? MPI_IN_PLACE : r, ip ? 0 : n, sdt, root, comm);
    case C_SCATTERV:
      return req ? MPI_Iscatterv(s, c->sc, c->sd, dt, ip ? MPI_IN_PLACE : r, ip ? 0 : c->sc[me],
                                 sdt, root, comm, req)
                 : PMPI_Scatterv(s, c->sc, c->sd, dt, ip ? MPI_IN_PLACE : r, ip ? 0 : c->sc[me],
                                 sdt, root, comm);
    default:
      return req ? MPI_Ibarrier(comm, req) : PMPI_Barrier(comm);
  }
}

static void reference(const case_t* c) {
  const int rc = issue(c, NULL);
  if (rc != MPI_SUCCESS) {
    char what[256];
    describe(c, what, sizeof what);
    expect(0, "%s: the reference PMPI call returned %s", what, errstr(rc));
  }
}

static void start(const case_t* c, MPI_Request* req) {
  *req = MPI_REQUEST_NULL;
  const int rc = issue(c, req);
  char what[256];
  describe(c, what, sizeof what);
  expect(rc == MPI_SUCCESS && *req != MPI_REQUEST_NULL, "%s returned %s, request %s", what,
         errstr(rc), *req == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "set");
}

/* The result against the reference; the send buffer unchanged. `how`: the completion. */
static void verify(const case_t* c, const char* how) {
  char what[256];
  describe(c, what, sizeof what);
  const size_t sz = (size_t)c->t->size;
  if (c->significant) {
    const long i = first_diff(c->r[0], c->r[1], c->cmp_n, c->t, c->tol);
    char got[64] = "", want[64] = "";
    if (i >= 0) {
      show(got, sizeof got, c->r[0] + (size_t)i * sz, c->t);
      show(want, sizeof want, c->r[1] + (size_t)i * sz, c->t);
    }
    expect(i < 0, "%s, completed by %s: element %ld of %zu is %s, the MPI library's %s%s", what,
           how, i, c->cmp_n, got, want, (size_t)i >= c->rn ? " (past the end)" : "");
  }
  if (c->coll != C_BARRIER && c->coll != C_BCAST && !in_place_here(c)) {
    const long i = first_diff(c->s[0], c->s[1], c->sn + kCanary, c->t, 0);
    expect(i < 0, "%s, completed by %s: the send buffer changed at element %ld", what, how, i);
  }
}

/* ---- completion ------------------------------------------------------------------------------ */

enum {
  W_WAIT,
  W_TEST,
  W_WAITALL,
  W_TESTALL,
  W_WAITANY,
  W_TESTANY,
  W_WAITSOME,
  W_TESTSOME,
  W_GET_STATUS,
  W_METHODS
};
static const char* const kWaitName[W_METHODS] = {
    "MPI_Wait",           "MPI_Test (loop)",     "MPI_Waitall",
    "MPI_Testall (loop)", "MPI_Waitany",         "MPI_Testany (loop)",
    "MPI_Waitsome",       "MPI_Testsome (loop)", "MPI_Request_get_status (loop) + MPI_Wait"};

static void poison_status(MPI_Status* s) {
  memset(s, 0x5a, sizeof *s);
  s->MPI_SOURCE = -77;
  s->MPI_TAG = -77;
}
static int empty_status(const MPI_Status* s) {
  int n = -1;
  MPI_Get_count(s, MPI_BYTE, &n);
  return s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG && n == 0;
}

/* Completes every request of a[0..n) with `method`, statuses into st (n entries) when given.
   Checks the standard's semantics: each active request completed exactly once, every handle
   MPI_REQUEST_NULL afterwards, MPI_UNDEFINED once nothing is active, empty statuses for the null
   entries where the function reports them, MPI_Request_get_status leaving the handle alone. */
static void complete(int n, MPI_Request* a, int method, MPI_Status* st, const char* what) {
  char how[160];
  snprintf(how, sizeof how, "%s%s", kWaitName[method],
           st ? " with statuses" : " with MPI_STATUS(ES)_IGNORE");
  const size_t m = n > 0 ? (size_t)n : 1;
  int* active = malloc(m * sizeof(int));
  int* done = malloc(m * sizeof(int));
  int* idx = malloc(m * sizeof(int));
  MPI_Status* tmp = malloc(m * sizeof(MPI_Status));
  for (int i = 0; i < n; ++i) {
    active[i] = a[i] != MPI_REQUEST_NULL;
    done[i] = 0;
    if (st) poison_status(&st[i]);
  }
  int rc = MPI_SUCCESS, flag = 0, k = -5, out = -5, guard = 0;
  switch (method) {
    case W_WAIT:
      for (int i = 0; i < n && rc == MPI_SUCCESS; ++i) {
        rc = MPI_Wait(&a[i], st ? &st[i] : MPI_STATUS_IGNORE);
        done[i] = 1;
      }
      break;
    case W_TEST:
      for (int left = n; left > 0 && rc == MPI_SUCCESS;) {
        left = 0;
        for (int i = 0; i < n && rc == MPI_SUCCESS; ++i) {
          if (done[i]) continue;
          rc = MPI_Test(&a[i], &flag, st ? &st[i] : MPI_STATUS_IGNORE);
          if (flag)
            done[i] = 1;
          else
            ++left;
        }
      }
      break;
    case W_WAITALL:
    case W_TESTALL:
      if (method == W_WAITALL) {
        rc = MPI_Waitall(n, a, st ? st : MPI_STATUSES_IGNORE);
      } else {
        do rc = MPI_Testall(n, a, &flag, st ? st : MPI_STATUSES_IGNORE);
        while (rc == MPI_SUCCESS && !flag);
      }
      for (int i = 0; i < n; ++i) done[i] = 1;
      break;
    case W_WAITANY:
    case W_TESTANY:
      for (;;) {
        MPI_Status s1;
        poison_status(&s1);
        k = -5;
        flag = 0;
        if (method == W_WAITANY) {
          rc = MPI_Waitany(n, a, &k, st ? &s1 : MPI_STATUS_IGNORE);
          flag = 1;
        } else {
          rc = MPI_Testany(n, a, &k, &flag, st ? &s1 : MPI_STATUS_IGNORE);
          if (rc == MPI_SUCCESS && !flag && k != MPI_UNDEFINED)
            expect(0, "%s: %s gave flag 0 and index %d, not MPI_UNDEFINED", what, how, k);
        }
        if (rc != MPI_SUCCESS || !flag) continue;
        if (k == MPI_UNDEFINED) break;
        if (k < 0 || k >= n || !active[k] || done[k] || ++guard > n) {
          expect(0, "%s: %s returned index %d (active %d, completed before %d)", what, how, k,
                 k >= 0 && k < n ? active[k] : -1, k >= 0 && k < n ? done[k] : -1);
          break;
        }
        done[k] = 1;
        if (st) st[k] = s1;
      }
      break;
    case W_WAITSOME:
    case W_TESTSOME:
      for (;;) {
        out = -5;
        if (method == W_WAITSOME)
          rc = MPI_Waitsome(n, a, &out, idx, st ? tmp : MPI_STATUSES_IGNORE);
        else
          rc = MPI_Testsome(n, a, &out, idx, st ? tmp : MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || out == MPI_UNDEFINED) break;
        if (out < 0 || out > n || (method == W_WAITSOME && out == 0) || guard > n) {
          expect(0, "%s: %s returned outcount %d", what, how, out);
          break;
        }
        for (int j = 0; j < out; ++j) {
          k = idx[j];
          if (k < 0 || k >= n || !active[k] || done[k]) {
            expect(0, "%s: %s returned index %d (active %d, completed before %d)", what, how, k,
                   k >= 0 && k < n ? active[k] : -1, k >= 0 && k < n ? done[k] : -1);
            guard = n + 1;
            continue;
          }
          done[k] = 1;
          ++guard;
          if (st) st[k] = tmp[j];
        }
      }
      break;
    default:
      for (int i = 0; i < n && rc == MPI_SUCCESS; ++i) {
        const MPI_Request before = a[i];
        do rc = MPI_Request_get_status(a[i], &flag, st ? &st[i] : MPI_STATUS_IGNORE);
        while (rc == MPI_SUCCESS && !flag);
        expect(a[i] == before, "%s: MPI_Request_get_status changed handle %d", what, i);
        if (active[i]) {
          rc = MPI_Request_get_status(a[i], &flag, MPI_STATUS_IGNORE);
          expect(rc == MPI_SUCCESS && flag,
                 "%s: a second MPI_Request_get_status on completed request %d: %s, flag %d", what,
                 i, errstr(rc), flag);
          rc = MPI_Wait(&a[i], st ? &st[i] : MPI_STATUS_IGNORE);
        }
        done[i] = 1;
      }
      break;
  }
  expect(rc == MPI_SUCCESS, "%s: %s returned %s", what, how, errstr(rc));
  int left = 0, missed = 0;
  for (int i = 0; i < n; ++i) {
    left += a[i] != MPI_REQUEST_NULL;
    missed += active[i] && !done[i];
  }
  expect(left == 0 && missed == 0,
         "%s: after %s %d handles are not MPI_REQUEST_NULL, %d requests not reported", what, how,
         left, missed);
  /* Null entries: Wait, Test, Waitall, Testall and Request_get_status report empty statuses. */
  if (st && method != W_WAITANY && method != W_TESTANY && method != W_WAITSOME &&
      method != W_TESTSOME)
    for (int i = 0; i < n; ++i)
      if (!active[i])
        expect(empty_status(&st[i]), "%s: %s: the status of null entry %d is not empty", what, how,
               i);
  free(active);
  free(done);
  free(idx);
  free(tmp);
}

/* ---- section colls --------------------------------------------------------------------------- */

/* One case: the reference, the nonblocking call, its completion (method and status use rotating
   with the case, and differing from rank to rank: completion is local), the checks. */
static void run_case(int coll, const comm_t* cm, int kind, int opi, int count, int root,
                     int inplace, double tol) {
  case_t c;
  case_init(&c, coll, cm, kind, opi, count, root, inplace);
  c.tol = tol;
  if (tol > 0) {
    reseed((uint64_t)c.id);
    fill(c.s[0], c.sn + kCanary, c.t, M_REAL);
    fill(c.r[0], c.rn + kCanary, c.t, M_REAL);
    memcpy(c.s[1], c.s[0], (c.sn + kCanary) * (size_t)c.t->size);
    memcpy(c.r[1], c.r[0], (c.rn + kCanary) * (size_t)c.t->size);
  }
  reference(&c);
  MPI_Request a[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  start(&c, &a[1]);
  const int method = (int)((c.id + g_wrank) % W_METHODS);
  const int with_status = (int)((c.id / W_METHODS + g_wrank) % 2);
  MPI_Status st[3];
  char what[256];
  describe(&c, what, sizeof what);
  /* A single request for Wait, Test and Request_get_status; between two nulls for the others. */
  if (method == W_WAIT || method == W_TEST || method == W_GET_STATUS)
    complete(1, &a[1], method, with_status ? st : NULL, what);
  else
    complete(3, a, method, with_status ? st : NULL, what);
  char how[96];
  snprintf(how, sizeof how, "%s%s", kWaitName[method], with_status ? " (statuses)" : "");
  verify(&c, how);
  case_free(&c);
}

static const int kCounts[4] = {0, 1, 37, 1001};

static void colls_on(const comm_t* cm) {
  int size;
  MPI_Comm_size(cm->comm, &size);
  /* Reductions: every valid (type, op) pair once per collective, the count, in-place use and root
     rotating with the pair. */
  for (int coll = C_ALLREDUCE; coll <= C_EXSCAN; ++coll) {
    int j = 0;
    for (int k = 0; k < K_TYPES; ++k)
      for (int o = 0; o < O_OPS; ++o) {
        if (!valid_pair(k, o)) continue;
        const int inplace =
            (coll == C_SCAN || coll == C_EXSCAN) ? (j / 4 + coll) % 3 : (j / 4 + coll) % 2;
        run_case(coll, cm, k, o, kCounts[j % 4], j % size, inplace, 0);
        ++j;
      }
    /* Large: 70000 elements (per block for reduce_scatter(_block)). */
    run_case(coll, cm, K_I32, O_SUM, 70000, 0, 0, 0);
    run_case(coll, cm, K_F64, O_MAX, 70000, size - 1, 1, 0);
    run_case(coll, cm, K_F32, O_SUM, 70000, size / 2, coll % 2, 0);
    run_case(coll, cm, K_U32, O_BXOR, 70000, 0, (coll + 1) % 2, 0);
    /* Real-valued sums: the order of the reduction may differ from the MPI library's. */
    if (coll != C_EXSCAN || size > 1) {
      run_case(coll, cm, K_F64, O_SUM, 1001, 1 % size, 0, 1e-12);
      run_case(coll, cm, K_F32, O_SUM, 37, 0, 1, 1e-5);
    }
  }
  /* Data movement: every root, every count, in place and not, the type rotating. */
  static const int kMove[8] = {K_I32, K_CHAR, K_F64, K_I64, K_F32, K_U32, K_I8, K_DI};
  for (int coll = C_BCAST; coll <= C_SCATTERV; ++coll) {
    if (is_rooted(coll)) {
      for (int root = 0; root < size; ++root)
        for (int j = 0; j < (coll == C_BCAST ? 4 : 8); ++j)
          run_case(coll, cm, kMove[(root + j) % 8], -1, kCounts[j % 4], root, j / 4, 0);
    } else {
      for (int j = 0; j < 16; ++j)
        run_case(coll, cm, kMove[j % 8], -1, kCounts[j % 4], j % size, (j / 4) % 2, 0);
    }
    const int big = coll == C_BCAST                               ? 70000
                    : (coll == C_ALLTOALL || coll == C_ALLTOALLV) ? 5000
                                                                  : 20000;
    run_case(coll, cm, K_I32, -1, big, size - 1, 0, 0);
    run_case(coll, cm, K_F64, -1, big, 0, 1, 0);
  }
  for (int j = 0; j < 3; ++j) run_case(C_BARRIER, cm, K_I32, -1, 0, 0, 0, 0);
}

static void section_colls(void) {
  phase("colls");
  for (int i = 0; i < kComms; ++i) colls_on(&g_comms[i]);
}

/* ---- section completion ---------------------------------------------------------------------- */

/* Completion functions on arrays of only MPI_REQUEST_NULL (and of length 0). */
static void null_arrays(void) {
  for (int n = 0; n <= 3; n += 3) {
    MPI_Request a[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status s, st[3];
    int k = -5, flag = -5, out = -5, idx[3], rc;
    poison_status(&s);
    rc = MPI_Waitany(n, a, &k, &s);
    expect(rc == MPI_SUCCESS && k == MPI_UNDEFINED && empty_status(&s),
           "MPI_Waitany on %d null requests: %s, index %d (not MPI_UNDEFINED?), status %s", n,
           errstr(rc), k, empty_status(&s) ? "empty" : "not empty");
    k = -5;
    poison_status(&s);
    rc = MPI_Testany(n, a, &k, &flag, &s);
    expect(rc == MPI_SUCCESS && flag && k == MPI_UNDEFINED && empty_status(&s),
           "MPI_Testany on %d null requests: %s, flag %d, index %d, status %s", n, errstr(rc), flag,
           k, empty_status(&s) ? "empty" : "not empty");
    rc = MPI_Waitsome(n, a, &out, idx, st);
    expect(rc == MPI_SUCCESS && out == MPI_UNDEFINED,
           "MPI_Waitsome on %d null requests: %s, outcount %d", n, errstr(rc), out);
    out = -5;
    rc = MPI_Testsome(n, a, &out, idx, MPI_STATUSES_IGNORE);
    expect(rc == MPI_SUCCESS && out == MPI_UNDEFINED,
           "MPI_Testsome on %d null requests: %s, outcount %d", n, errstr(rc), out);
    for (int i = 0; i < 3; ++i) poison_status(&st[i]);
    rc = MPI_Waitall(n, a, st);
    int empty = 1;
    for (int i = 0; i < n; ++i) empty &= empty_status(&st[i]);
    expect(rc == MPI_SUCCESS && empty, "MPI_Waitall on %d null requests: %s, statuses %s", n,
           errstr(rc), empty ? "empty" : "not empty");
    flag = -5;
    for (int i = 0; i < 3; ++i) poison_status(&st[i]);
    rc = MPI_Testall(n, a, &flag, st);
    empty = 1;
    for (int i = 0; i < n; ++i) empty &= empty_status(&st[i]);
    expect(rc == MPI_SUCCESS && flag && empty,
           "MPI_Testall on %d null requests: %s, flag %d, statuses %s", n, errstr(rc), flag,
           empty ? "empty" : "not empty");
  }
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Status s;
  int flag = -5;
  poison_status(&s);
  int rc = MPI_Wait(&r, &s);
  expect(rc == MPI_SUCCESS && empty_status(&s), "MPI_Wait on MPI_REQUEST_NULL: %s, status %s",
         errstr(rc), empty_status(&s) ? "empty" : "not empty");
  poison_status(&s);
  rc = MPI_Test(&r, &flag, &s);
  expect(rc == MPI_SUCCESS && flag && empty_status(&s),
         "MPI_Test on MPI_REQUEST_NULL: %s, flag %d, status %s", errstr(rc), flag,
         empty_status(&s) ? "empty" : "not empty");
  flag = -5;
  poison_status(&s);
  rc = MPI_Request_get_status(r, &flag, &s);
  expect(rc == MPI_SUCCESS && flag && empty_status(&s),
         "MPI_Request_get_status on MPI_REQUEST_NULL: %s, flag %d, status %s", errstr(rc), flag,
         empty_status(&s) ? "empty" : "not empty");
}

/* Collective requests on cm mixed with the program's own point-to-point requests on the world
   (to and from both neighbours) and null entries, completed together by `method`. */
static void mixed_array(const comm_t* cm, int method, int with_status) {
  int size;
  MPI_Comm_size(cm->comm, &size);
  enum { kColl = 4, kN = 9 };
  case_t c[kColl];
  case_init(&c[0], C_ALLREDUCE, cm, K_I32, O_SUM, 37, 0, 0);
  case_init(&c[1], C_BCAST, cm, K_F64, -1, 1001, method, 0);
  case_init(&c[2], C_ALLTOALLV, cm, K_I64, -1, 37, method, with_status);
  case_init(&c[3], C_BARRIER, cm, K_I32, -1, 0, 0, 0);
  for (int i = 0; i < kColl; ++i) reference(&c[i]);
  const int right = (g_wrank + 1) % g_wsize, left = (g_wrank + g_wsize - 1) % g_wsize;
  const int tag = 100 + 2 * method + with_status, big = 1000, small = 5;
  int *tor = malloc(sizeof(int) * big), *froml = malloc(sizeof(int) * big);
  int tol[5], fromr[5];
  for (int i = 0; i < big; ++i) {
    tor[i] = g_wrank * 100000 + i + tag;
    froml[i] = -1;
  }
  for (int i = 0; i < small; ++i) {
    tol[i] = -(g_wrank * 1000 + i + tag);
    fromr[i] = 1;
  }
  /* 0 coll, 1 irecv from left, 2 null, 3 coll, 4 isend to right, 5 coll, 6 irecv from right,
     7 null, 8 coll; the isend to the left is completed alone, by MPI_Wait. */
  MPI_Request a[kN], extra;
  a[2] = a[7] = MPI_REQUEST_NULL;
  start(&c[0], &a[0]);
  MPI_Irecv(froml, big, MPI_INT, left, tag, MPI_COMM_WORLD, &a[1]);
  start(&c[1], &a[3]);
  MPI_Isend(tor, big, MPI_INT, right, tag, MPI_COMM_WORLD, &a[4]);
  MPI_Isend(tol, small, MPI_INT, left, tag + 50, MPI_COMM_WORLD, &extra);
  start(&c[2], &a[5]);
  MPI_Irecv(fromr, small, MPI_INT, right, tag + 50, MPI_COMM_WORLD, &a[6]);
  start(&c[3], &a[8]);
  MPI_Status st[kN];
  char what[160];
  snprintf(what, sizeof what, "%d collectives on %s mixed with point-to-point and null requests",
           kColl, cm->name);
  complete(kN, a, method, with_status ? st : NULL, what);
  MPI_Wait(&extra, MPI_STATUS_IGNORE);
  int bad = 0;
  for (int i = 0; i < big; ++i) bad += froml[i] != left * 100000 + i + tag;
  for (int i = 0; i < small; ++i) bad += fromr[i] != -(right * 1000 + i + tag);
  expect(!bad, "%s, completed by %s: %d point-to-point values wrong", what, kWaitName[method], bad);
  if (with_status) {
    int n1 = -1, n6 = -1;
    MPI_Get_count(&st[1], MPI_INT, &n1);
    MPI_Get_count(&st[6], MPI_INT, &n6);
    expect(st[1].MPI_SOURCE == left && st[1].MPI_TAG == tag && n1 == big &&
               st[6].MPI_SOURCE == right && st[6].MPI_TAG == tag + 50 && n6 == small,
           "%s, completed by %s: receive statuses (source %d tag %d count %d, source %d tag %d "
           "count %d)",
           what, kWaitName[method], st[1].MPI_SOURCE, st[1].MPI_TAG, n1, st[6].MPI_SOURCE,
           st[6].MPI_TAG, n6);
  }
  for (int i = 0; i < kColl; ++i) {
    verify(&c[i], kWaitName[method]);
    case_free(&c[i]);
  }
  free(tor);
  free(froml);
}

/* A receive that cannot have completed (rank 0 sends only after a barrier that follows the tests)
   next to a collective request that has completed (rank 0 waits on it before the barrier, the
   others poll it with MPI_Request_get_status, which must not free it): MPI_Testall gives flag 0
   and leaves every handle as it was (the completed collective included); MPI_Testany on the
   receive gives flag 0 and MPI_UNDEFINED; MPI_Test and MPI_Request_get_status give flag 0 and keep
   the handle; MPI_Testsome reports the collective alone. */
static void not_yet_complete(int method) {
  const comm_t* cm = &g_comms[0];
  if (g_wsize < 2) return;
  case_t c;
  case_init(&c, C_ALLREDUCE, cm, K_I32, O_SUM, 1001, 0, 0);
  reference(&c);
  const int tag = 900 + method;
  int value = -1;
  MPI_Request a[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  start(&c, &a[0]);
  if (g_wrank == 0) {
    const int rc = MPI_Wait(&a[0], MPI_STATUS_IGNORE);
    expect(rc == MPI_SUCCESS, "MPI_Wait on an Iallreduce: %s", errstr(rc));
  } else {
    MPI_Irecv(&value, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &a[1]);
    MPI_Request before[3];
    memcpy(before, a, sizeof a);
    int flag = 0, k = -5, out = -5, idx[3] = {-5, -5, -5};
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && !flag) rc = MPI_Request_get_status(a[0], &flag, MPI_STATUS_IGNORE);
    expect(rc == MPI_SUCCESS && a[0] == before[0],
           "MPI_Request_get_status on an Iallreduce until it completes: %s, handle %s", errstr(rc),
           a[0] == before[0] ? "unchanged" : "changed");
    MPI_Status st[3];
    for (int i = 0; i < 3; ++i) poison_status(&st[i]);
    flag = -5;
    rc = MPI_Testall(3, a, &flag, st);
    expect(rc == MPI_SUCCESS && !flag && !memcmp(a, before, sizeof a),
           "MPI_Testall on an incomplete receive and a completed Iallreduce: %s, flag %d, "
           "handles %s",
           errstr(rc), flag, memcmp(a, before, sizeof a) ? "changed" : "unchanged");
    rc = MPI_Testany(1, &a[1], &k, &flag, MPI_STATUS_IGNORE);
    expect(rc == MPI_SUCCESS && !flag && k == MPI_UNDEFINED && a[1] == before[1],
           "MPI_Testany on an incomplete receive: %s, flag %d, index %d", errstr(rc), flag, k);
    flag = -5;
    rc = MPI_Test(&a[1], &flag, MPI_STATUS_IGNORE);
    expect(rc == MPI_SUCCESS && !flag && a[1] == before[1],
           "MPI_Test on an incomplete receive: %s, flag %d", errstr(rc), flag);
    flag = -5;
    rc = MPI_Request_get_status(a[1], &flag, MPI_STATUS_IGNORE);
    expect(rc == MPI_SUCCESS && !flag,
           "MPI_Request_get_status on an incomplete receive: %s, flag %d", errstr(rc), flag);
    rc = MPI_Testsome(3, a, &out, idx, st);
    expect(rc == MPI_SUCCESS && out == 1 && idx[0] == 0 && a[0] == MPI_REQUEST_NULL &&
               a[1] == before[1],
           "MPI_Testsome on an incomplete receive and a completed Iallreduce: %s, outcount %d, "
           "index %d, handles %s %s",
           errstr(rc), out, idx[0], a[0] == MPI_REQUEST_NULL ? "null" : "set",
           a[1] == before[1] ? "unchanged" : "changed");
  }
  int rc = MPI_Barrier(MPI_COMM_WORLD);
  expect(rc == MPI_SUCCESS, "MPI_Barrier: %s", errstr(rc));
  if (g_wrank == 0)
    for (int r = 1; r < g_wsize; ++r) {
      value = r * 11 + tag;
      MPI_Send(&value, 1, MPI_INT, r, tag, MPI_COMM_WORLD);
    }
  MPI_Status st[3];
  complete(3, a, method, st, "a receive that was incomplete");
  if (g_wrank != 0) {
    int n = -1;
    MPI_Get_count(&st[1], MPI_INT, &n);
    expect(value == g_wrank * 11 + tag, "the receive that was incomplete got %d", value);
    expect(st[1].MPI_SOURCE == 0 && st[1].MPI_TAG == tag && n == 1,
           "the receive that was incomplete, completed by %s: status source %d tag %d count %d",
           kWaitName[method], st[1].MPI_SOURCE, st[1].MPI_TAG, n);
  }
  verify(&c, kWaitName[method]);
  case_free(&c);
}

static void section_completion(void) {
  phase("completion: null arrays");
  null_arrays();
  phase("completion: mixed arrays");
  for (int i = 0; i < kComms; ++i)
    for (int method = 0; method < W_METHODS; ++method)
      for (int with_status = 0; with_status < 2; ++with_status)
        mixed_array(&g_comms[i], method, with_status);
  phase("completion: not yet complete");
  for (int method = 0; method < W_METHODS; ++method) not_yet_complete(method);
}

/* ---- section order --------------------------------------------------------------------------- */

/* A permutation of 0..n-1 from `seed` alone (the same on every rank that passes the same seed). */
static void permutation(int* perm, int n, uint64_t seed) {
  uint64_t z = seed;
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = n - 1; i > 0; --i) {
    z += 0x9e3779b97f4a7c15ULL;
    uint64_t x = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    const int j = (int)(x % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

/* One case per collective (`n` of them, cycling through the sixteen), all outstanding at once. */
static void batch_init(case_t* c, int n, const comm_t* cm, int salt) {
  static const int kRedOp[6] = {O_SUM, O_MAX, O_BXOR, O_MIN, O_PROD, O_BOR};
  static const int kRedType[6] = {K_I32, K_F64, K_U32, K_F32, K_I64, K_I8};
  int size;
  MPI_Comm_size(cm->comm, &size);
  for (int i = 0; i < n; ++i) {
    const int coll = (i + salt) % C_COLLS, v = i + salt;
    const int count = v % 3 == 0 ? 1001 : v % 3 == 1 ? 37 : 1;
    if (is_reduction(coll)) {
      int k = kRedType[v % 6], o = kRedOp[(v / 6 + coll) % 6];
      if (!valid_pair(k, o)) o = O_SUM;
      case_init(&c[i], coll, cm, k, o, count, v, v % 2);
    } else {
      case_init(&c[i], coll, cm, v % 2 ? K_I32 : K_F64, -1, count, v, v % 2);
    }
  }
}

enum { ORD_REVERSE, ORD_RANDOM_COMMON, ORD_RANDOM_OWN, ORD_WAITALL, ORD_WAITANY, ORD_TESTSOME };
static const char* const kOrderName[] = {"MPI_Wait in reverse order",
                                         "MPI_Wait in a random order common to all ranks",
                                         "MPI_Wait in each rank's own random order",
                                         "MPI_Waitall",
                                         "MPI_Waitany",
                                         "MPI_Testsome"};

static void batch(const comm_t* cm, int n, int order, int salt) {
  case_t* c = malloc(sizeof(case_t) * (size_t)n);
  MPI_Request* r = malloc(sizeof(MPI_Request) * (size_t)n);
  int* perm = malloc(sizeof(int) * (size_t)n);
  batch_init(c, n, cm, salt);
  for (int i = 0; i < n; ++i) reference(&c[i]);
  for (int i = 0; i < n; ++i) start(&c[i], &r[i]);
  char what[160];
  snprintf(what, sizeof what, "%d nonblocking collectives outstanding on %s", n, cm->name);
  switch (order) {
    case ORD_REVERSE:
    case ORD_RANDOM_COMMON:
    case ORD_RANDOM_OWN:
      if (order == ORD_REVERSE)
        for (int i = 0; i < n; ++i) perm[i] = n - 1 - i;
      else
        permutation(perm, n, 1000 + (uint64_t)salt + (order == ORD_RANDOM_OWN ? 77 * g_wrank : 0));
      for (int i = 0; i < n; ++i) {
        const int rc = MPI_Wait(&r[perm[i]], MPI_STATUS_IGNORE);
        expect(rc == MPI_SUCCESS && r[perm[i]] == MPI_REQUEST_NULL, "%s: MPI_Wait on %s: %s", what,
               kCollName[c[perm[i]].coll], errstr(rc));
      }
      break;
    case ORD_WAITALL:
      complete(n, r, W_WAITALL, NULL, what);
      break;
    case ORD_WAITANY:
      complete(n, r, W_WAITANY, NULL, what);
      break;
    default:
      complete(n, r, W_TESTSOME, NULL, what);
      break;
  }
  for (int i = 0; i < n; ++i) {
    verify(&c[i], kOrderName[order]);
    case_free(&c[i]);
  }
  free(c);
  free(r);
  free(perm);
}

/* Blocking MPI_Allreduce and MPI_Bcast (intercepted ones) while nonblocking collectives are
   outstanding on the same communicator; then the nonblocking ones completed. */
static void blocking_between(const comm_t* cm, int salt) {
  int rank, size;
  MPI_Comm_rank(cm->comm, &rank);
  MPI_Comm_size(cm->comm, &size);
  enum { kN = 8 };
  case_t c[kN];
  MPI_Request r[kN];
  batch_init(c, kN, cm, salt);
  for (int i = 0; i < kN; ++i) reference(&c[i]);
  for (int i = 0; i < kN / 2; ++i) start(&c[i], &r[i]);
  int x = rank + 1, y = -1;
  int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, cm->comm);
  expect(rc == MPI_SUCCESS && y == size * (size + 1) / 2,
         "MPI_Allreduce on %s with %d nonblocking ones outstanding: %s, %d", cm->name, kN / 2,
         errstr(rc), y);
  for (int i = kN / 2; i < kN; ++i) start(&c[i], &r[i]);
  enum { kB = 1001 };
  double b[kB];
  const int root = (salt + 1) % size;
  for (int i = 0; i < kB; ++i) b[i] = rank == root ? i * 0.5 + salt : -1;
  rc = MPI_Bcast(b, kB, MPI_DOUBLE, root, cm->comm);
  int bad = 0;
  for (int i = 0; i < kB; ++i) bad += b[i] != i * 0.5 + salt;
  expect(rc == MPI_SUCCESS && !bad,
         "MPI_Bcast on %s with %d nonblocking ones outstanding: %s, %d values wrong", cm->name, kN,
         errstr(rc), bad);
  int perm[kN];
  permutation(perm, kN, 5000 + (uint64_t)salt + 31 * (uint64_t)g_wrank);
  for (int i = 0; i < kN; ++i) MPI_Wait(&r[perm[i]], MPI_STATUS_IGNORE);
  for (int i = 0; i < kN; ++i) {
    verify(&c[i], "MPI_Wait after blocking collectives");
    case_free(&c[i]);
  }
}

/* Outstanding operations on two communicators, started interleaved; even world ranks complete
   A's in order and then B's, odd ranks B's in reverse and then A's in reverse. */
static void two_comms(const comm_t* A, const comm_t* B, int salt) {
  enum { kN = 6 };
  case_t a[kN], b[kN];
  MPI_Request ra[kN], rb[kN];
  batch_init(a, kN, A, salt);
  batch_init(b, kN, B, salt + 5);
  for (int i = 0; i < kN; ++i) reference(&a[i]);
  for (int i = 0; i < kN; ++i) reference(&b[i]);
  for (int i = 0; i < kN; ++i) {
    start(&a[i], &ra[i]);
    start(&b[i], &rb[i]);
  }
  if (g_wrank % 2 == 0) {
    for (int i = 0; i < kN; ++i) MPI_Wait(&ra[i], MPI_STATUS_IGNORE);
    for (int i = 0; i < kN; ++i) MPI_Wait(&rb[i], MPI_STATUS_IGNORE);
  } else {
    for (int i = kN - 1; i >= 0; --i) MPI_Wait(&rb[i], MPI_STATUS_IGNORE);
    for (int i = kN - 1; i >= 0; --i) MPI_Wait(&ra[i], MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < kN; ++i) {
    expect(ra[i] == MPI_REQUEST_NULL && rb[i] == MPI_REQUEST_NULL, "MPI_Wait left a handle");
    verify(&a[i], "MPI_Wait, two communicators in opposite orders");
    verify(&b[i], "MPI_Wait, two communicators in opposite orders");
    case_free(&a[i]);
    case_free(&b[i]);
  }
}

static void section_order(void) {
  phase("order: batches");
  int salt = 0;
  for (int i = 0; i < kComms; ++i)
    for (int order = ORD_REVERSE; order <= ORD_TESTSOME; ++order) {
      batch(&g_comms[i], 8, order, salt++);
      batch(&g_comms[i], C_COLLS, order, salt++);
    }
  phase("order: blocking between");
  for (int i = 0; i < kComms; ++i) blocking_between(&g_comms[i], salt++);
  phase("order: two communicators");
  two_comms(&g_comms[0], &g_comms[2], salt++);
  two_comms(&g_comms[2], &g_comms[1], salt++);
  two_comms(&g_comms[1], &g_comms[0], salt++);
}

/* ---- mode progress --------------------------------------------------------------------------- */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

enum { V_RECV_ONE, V_RECV_ALL, V_BARRIER, V_BARRIER_SAME, V_TEST_COMPUTE, V_COMPUTE, V_VARIANTS };
static const char* const kVariantName[V_VARIANTS] = {
    "rank 0 in MPI_Recv from rank 1, which waits on the collective first",
    "rank 0 in MPI_Recv from every other rank, which wait on the collective first",
    "rank 0 in a blocking MPI_Barrier on another communicator, which the others enter after "
    "waiting on the collective",
    "rank 0 in a blocking MPI_Barrier on the same communicator, which the others enter after "
    "waiting on the collective",
    "the last rank computing 20 ms, calling MPI_Test every 1 ms, the others in MPI_Wait",
    "rank 0 computing 20 ms without MPI calls, the others in MPI_Wait"};

static void progress_case(int coll, int count, int variant) {
  char name[256];
  snprintf(name, sizeof name, "progress: %s of %d, %s", kCollName[coll], count,
           kVariantName[variant]);
  phase(name);
  const comm_t* cm = &g_comms[0];
  case_t c;
  case_init(&c, coll, cm, K_F64, coll == C_ALLREDUCE ? O_SUM : -1, count, 0, 0);
  reference(&c);
  const int p = g_wsize, me = g_wrank, tag = 500 + variant;
  int token = -1;
  MPI_Request r;
  PMPI_Barrier(MPI_COMM_WORLD); /* every rank starts at once */
  start(&c, &r);
  switch (variant) {
    case V_RECV_ONE:
    case V_RECV_ALL:
      if (me == 0) {
        for (int q = 1; q < (variant == V_RECV_ONE && p > 1 ? 2 : p); ++q) {
          MPI_Recv(&token, 1, MPI_INT, q, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          expect(token == q * 3 + tag, "%s: received %d from rank %d", name, token, q);
        }
      } else if (variant == V_RECV_ALL || me == 1) {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        token = me * 3 + tag;
        MPI_Send(&token, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
      }
      break;
    case V_BARRIER:
    case V_BARRIER_SAME: {
      if (me != 0) MPI_Wait(&r, MPI_STATUS_IGNORE);
      const int rc = MPI_Barrier(variant == V_BARRIER ? g_comms[2].comm : cm->comm);
      expect(rc == MPI_SUCCESS, "%s: MPI_Barrier returned %s", name, errstr(rc));
      break;
    }
    case V_TEST_COMPUTE:
      if (me == p - 1) {
        const double t0 = now();
        int flag = 0;
        while (now() - t0 < 0.02) {
          const double t1 = now();
          while (now() - t1 < 0.001) {
          }
          if (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        }
      }
      break;
    default:
      if (me == 0) {
        const double t0 = now();
        while (now() - t0 < 0.02) {
        }
      }
      break;
  }
  const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  expect(rc == MPI_SUCCESS && r == MPI_REQUEST_NULL, "%s: MPI_Wait returned %s", name, errstr(rc));
  verify(&c, kVariantName[variant]);
  case_free(&c);
}

/* `only`: one variant (0 to V_VARIANTS - 1), or -1 for all. */
static void mode_progress(int only) {
  for (int variant = 0; variant < V_VARIANTS; ++variant) {
    if (only >= 0 && variant != only) continue;
    progress_case(C_ALLREDUCE, 1, variant);
    progress_case(C_ALLREDUCE, 1 << 20, variant);
    progress_case(C_BCAST, 1, variant);
    progress_case(C_BCAST, 1 << 20, variant);
    progress_case(C_ALLTOALL, 1, variant);
    progress_case(C_ALLTOALL, 1 << 16, variant);
  }
}

/* ---- mode many ------------------------------------------------------------------------------- */

/* `calls` MPI_Iallreduce outstanding at once, each on its own buffer of n floats (varied: 1..n),
   completed together by `method`; every result equal to a separate PMPI_Allreduce's (small
   integer values: the sums are exact in any order). */
static void many(const comm_t* cm, int calls, int n, int varied, int inplace, int method,
                 int with_status) {
  char name[256];
  snprintf(name, sizeof name, "many: %d MPI_Iallreduce of %s%d floats%s on %s, %s%s", calls,
           varied ? "1 to " : "", n, inplace ? " in place" : "", cm->name, kWaitName[method],
           with_status ? " with statuses" : "");
  phase(name);
  float** in = malloc(sizeof(float*) * (size_t)calls);
  float** out = malloc(sizeof(float*) * (size_t)calls);
  float** orig = malloc(sizeof(float*) * (size_t)calls);
  float** ref = malloc(sizeof(float*) * (size_t)calls);
  int* cnt = malloc(sizeof(int) * (size_t)calls);
  MPI_Request* r = malloc(sizeof(MPI_Request) * (size_t)calls);
  MPI_Status* st = malloc(sizeof(MPI_Status) * (size_t)calls);
  reseed((uint64_t)g_cases++);
  for (int i = 0; i < calls; ++i) {
    cnt[i] = varied ? 1 + (i * 37 + 11) % n : n;
    const size_t bytes = sizeof(float) * ((size_t)cnt[i] + kCanary);
    in[i] = malloc(bytes);
    out[i] = malloc(bytes);
    orig[i] = malloc(bytes);
    ref[i] = malloc(bytes);
    for (int j = 0; j < cnt[i] + kCanary; ++j) {
      in[i][j] = (float)rnd(-3, 3);
      ref[i][j] = out[i][j] = inplace ? in[i][j] : -7.0f;
    }
    memcpy(orig[i], in[i], bytes);
  }
  for (int i = 0; i < calls; ++i)
    PMPI_Allreduce(inplace ? MPI_IN_PLACE : in[i], ref[i], cnt[i], MPI_FLOAT, MPI_SUM, cm->comm);
  int failed = 0;
  for (int i = 0; i < calls; ++i) {
    r[i] = MPI_REQUEST_NULL;
    const int rc = MPI_Iallreduce(inplace ? MPI_IN_PLACE : in[i], out[i], cnt[i], MPI_FLOAT,
                                  MPI_SUM, cm->comm, &r[i]);
    if (rc != MPI_SUCCESS && !failed++) expect(0, "%s: call %d returned %s", name, i, errstr(rc));
  }
  complete(calls, r, method, with_status ? st : NULL, name);
  int wrong = 0, first = -1, changed = 0;
  for (int i = 0; i < calls; ++i) {
    const size_t bytes = sizeof(float) * ((size_t)cnt[i] + kCanary);
    if (memcmp(out[i], ref[i], bytes) != 0 && wrong++ == 0) first = i;
    if (!inplace) changed += memcmp(in[i], orig[i], bytes) != 0;
  }
  expect(!wrong && !changed && !failed,
         "%s: %d results differ from PMPI_Allreduce's (the first: call %d), %d send buffers "
         "changed",
         name, wrong, first, changed);
  for (int i = 0; i < calls; ++i) {
    free(in[i]);
    free(out[i]);
    free(orig[i]);
    free(ref[i]);
  }
  free(in);
  free(out);
  free(orig);
  free(ref);
  free(cnt);
  free(r);
  free(st);
}

static void mode_many(void) {
  many(&g_comms[0], 256, 1024, 0, 0, W_WAITALL, 0);
  many(&g_comms[0], 256, 1024, 0, 1, W_WAITALL, 1);
  many(&g_comms[2], 256, 1024, 0, 0, W_TESTALL, 0);
  many(&g_comms[1], 256, 4096, 1, 0, W_WAITSOME, 1);
  many(&g_comms[0], 1024, 1, 0, 0, W_WAITANY, 0);
  many(&g_comms[2], 256, 1024, 1, 1, W_TESTSOME, 0);
}

/* ---- mode fresh ------------------------------------------------------------------------------ */

static void sum_by_hand(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

/* Communicators used only with nonblocking calls (a duplicate, a split): twelve MPI_Iallreduce
   on each, some with a user-defined operation, and once an MPI_Comm_dup of the communicator
   while they are outstanding; every result against PMPI_Allreduce. */
static void mode_fresh(void) {
  phase("fresh");
  MPI_Op by_hand;
  MPI_Op_create(sum_by_hand, 1, &by_hand);
  enum { kCalls = 12, kCount = 1000 };
  int* in = malloc(sizeof(int) * kCalls * kCount);
  int* out = malloc(sizeof(int) * kCalls * kCount);
  int* ref = malloc(sizeof(int) * kCount);
  for (int round = 0; round < 6; ++round) {
    MPI_Comm comm, extra = MPI_COMM_NULL;
    if (round % 2 == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
      MPI_Comm_split(MPI_COMM_WORLD, g_wrank % 2, g_wsize - g_wrank, &comm);
    MPI_Request req[kCalls];
    for (int c = 0; c < kCalls; ++c) {
      for (int i = 0; i < kCount; ++i) in[c * kCount + i] = (g_wrank + 1) * (i + 1) + c + round;
      /* Call 4 (c = 3) would end a communicator's warm-up (OVERPASS_COMM_WARMUP). */
      const MPI_Op op = c % 3 == 1 ? by_hand : MPI_SUM;
      const int count = c == 3 && round >= 4 ? 1 : kCount; /* tiny or larger set-up calls */
      MPI_Iallreduce(in + c * kCount, out + c * kCount, count, MPI_INT, op, comm, &req[c]);
      if (c == 3 && round == 2) MPI_Comm_dup(comm, &extra);
    }
    MPI_Waitall(kCalls, req, MPI_STATUSES_IGNORE);
    for (int c = 0; c < kCalls; ++c) {
      const int count = c == 3 && round >= 4 ? 1 : kCount;
      PMPI_Allreduce(in + c * kCount, ref, count, MPI_INT, MPI_SUM, comm);
      expect(memcmp(ref, out + c * kCount, sizeof(int) * (size_t)count) == 0,
             "fresh round %d call %d: result differs from PMPI_Allreduce's", round, c);
    }
    if (extra != MPI_COMM_NULL) MPI_Comm_free(&extra);
    MPI_Comm_free(&comm);
  }
  MPI_Op_free(&by_hand);
  free(in);
  free(out);
  free(ref);
}

/* ---- mode fusion ----------------------------------------------------------------------------- */

/* Run with OVERPASS_DETERMINISTIC=1 and OVERPASS_FUSION: `calls` MPI_Iallreduce (MPI_SUM) of
   real-valued doubles and floats of varied lengths outstanding at once, posted with pauses that
   differ from rank to rank (so that the ranks see different queues when they agree on groups),
   then one MPI_Waitall; every result must equal the serial rank-order sum ((x0 + x1) + x2) ...,
   bit for bit, whatever groups the calls were fused in. */
static void fusion(const comm_t* cm, int calls, int n, int dbl) {
  char name[200];
  snprintf(name, sizeof name, "fusion: %d MPI_Iallreduce of up to %d %s on %s", calls, n,
           dbl ? "doubles" : "floats", cm->name);
  phase(name);
  int rank, size;
  MPI_Comm_rank(cm->comm, &rank);
  MPI_Comm_size(cm->comm, &size);
  const size_t el = dbl ? sizeof(double) : sizeof(float);
  const MPI_Datatype type = dbl ? MPI_DOUBLE : MPI_FLOAT;
  char** in = malloc(sizeof(char*) * (size_t)calls);
  char** out = malloc(sizeof(char*) * (size_t)calls);
  int* cnt = malloc(sizeof(int) * (size_t)calls);
  MPI_Request* r = malloc(sizeof(MPI_Request) * (size_t)calls);
  reseed((uint64_t)g_cases++ * 7919u + (uint64_t)rank);
  for (int i = 0; i < calls; ++i) {
    cnt[i] = 1 + (i * 53 + 7) % n;
    in[i] = malloc(el * (size_t)cnt[i]);
    out[i] = malloc(el * (size_t)cnt[i]);
    for (int j = 0; j < cnt[i]; ++j) {
      const double v = ldexp((double)rnd(-1000000, 1000000) / 999983.0, rnd(-20, 20));
      if (dbl)
        ((double*)in[i])[j] = v;
      else
        ((float*)in[i])[j] = (float)v;
    }
  }
  for (int i = 0; i < calls; ++i) {
    MPI_Iallreduce(in[i], out[i], cnt[i], type, MPI_SUM, cm->comm, &r[i]);
    if (i % 8 == 7 && rank % 2) usleep(200);
  }
  MPI_Waitall(calls, r, MPI_STATUSES_IGNORE);
  int wrong = 0, first = -1;
  for (int i = 0; i < calls; ++i) {
    char* all = malloc(el * (size_t)cnt[i] * (size_t)size);
    PMPI_Allgather(in[i], cnt[i], type, all, cnt[i], type, cm->comm);
    for (int j = 0; j < cnt[i]; ++j) {
      int differs;
      if (dbl) {
        double acc = ((double*)all)[j];
        for (int q = 1; q < size; ++q)
          acc += ((double*)all)[(size_t)q * (size_t)cnt[i] + (size_t)j];
        differs = memcmp(&acc, (double*)out[i] + j, sizeof acc) != 0;
      } else {
        float acc = ((float*)all)[j];
        for (int q = 1; q < size; ++q) acc += ((float*)all)[(size_t)q * (size_t)cnt[i] + (size_t)j];
        differs = memcmp(&acc, (float*)out[i] + j, sizeof acc) != 0;
      }
      if (differs) {
        if (wrong++ == 0) first = i;
        break;
      }
    }
    free(all);
  }
  expect(!wrong, "%s: %d results not bitwise the serial rank-order sum (the first: call %d)", name,
         wrong, first);
  for (int i = 0; i < calls; ++i) {
    free(in[i]);
    free(out[i]);
  }
  free(in);
  free(out);
  free(cnt);
  free(r);
}

static void mode_fusion(void) {
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 4; ++i) MPI_Barrier(g_comms[c].comm); /* past the warm-up */
  fusion(&g_comms[0], 64, 700, 1);
  fusion(&g_comms[0], 256, 1024, 0);
  fusion(&g_comms[2], 64, 3000, 1);
  fusion(&g_comms[1], 100, 50, 0);
}

/* ---- modes cancel and free (erroneous) ------------------------------------------------------- */

static int mode_erroneous(const char* mode, int cancel, int ret) {
  phase(mode);
  if (ret) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  enum { kN = 4096 };
  static float in[kN], out[kN];
  for (int i = 0; i < kN; ++i) {
    in[i] = (float)(g_wrank + i);
    out[i] = -1;
  }
  MPI_Barrier(MPI_COMM_WORLD); /* an implementation may set the communicator up here */
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Iallreduce(in, out, kN, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
  const MPI_Request before = r;
  const int rc = cancel ? MPI_Cancel(&r) : MPI_Request_free(&r);
  printf("nonblocking %s: rank %d: %s on an MPI_Iallreduce request returned %s; the handle is %s\n",
         mode, g_wrank, cancel ? "MPI_Cancel" : "MPI_Request_free", errstr(rc),
         r == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL"
         : r == before         ? "unchanged"
                               : "changed");
  fflush(stdout);
  if (r != MPI_REQUEST_NULL) {
    MPI_Status st;
    const int wrc = MPI_Wait(&r, &st);
    int cancelled = -1;
    MPI_Test_cancelled(&st, &cancelled);
    int wrong = 0;
    for (int i = 0; i < kN; ++i)
      wrong += out[i] != (float)g_wsize * (float)i + (float)(g_wsize * (g_wsize - 1) / 2);
    printf(
        "nonblocking %s: rank %d: then MPI_Wait returned %s, MPI_Test_cancelled %d, %d values "
        "wrong\n",
        mode, g_wrank, errstr(wrc), cancelled, wrong);
  }
  fflush(stdout);
  PMPI_Barrier(MPI_COMM_WORLD);
  int reported = rc != MPI_SUCCESS, any = 0;
  PMPI_Allreduce(&reported, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (g_wrank == 0)
    printf("nonblocking %s: the erroneous call was %s\n", mode, any ? "reported" : "not reported");
  fflush(stdout);
  alarm(0);
  MPI_Finalize();
  return any ? 1 : 0;
}

/* ---- main ------------------------------------------------------------------------------------ */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_wsize);
  const char* env = getenv("CHECK_SEED");
  if (env && *env) g_seed = strtoull(env, NULL, 0);
  env = getenv("CHECK_WATCHDOG");
  if (env && *env) g_watchdog = (unsigned)atoi(env);
  signal(SIGALRM, on_alarm);
  const char* mode = argc > 1 ? argv[1] : "all";
  const int ret = argc > 2 && strcmp(argv[2], "return") == 0;
  if (!strcmp(mode, "cancel") || !strcmp(mode, "free"))
    return mode_erroneous(mode, !strcmp(mode, "cancel"), ret);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  init_types();
  /* Splits inherit the world's error handler. */
  g_comms[0].comm = MPI_COMM_WORLD;
  g_comms[0].name = "world";
  MPI_Comm_split(MPI_COMM_WORLD, g_wrank < g_wsize / 2, g_wrank, &g_comms[1].comm);
  g_comms[1].name = "split(halves)";
  MPI_Comm_split(MPI_COMM_WORLD, 0, g_wsize - 1 - g_wrank, &g_comms[2].comm);
  g_comms[2].name = "split(reversed)";
  const int all = !strcmp(mode, "all");
  if (all || !strcmp(mode, "colls")) section_colls();
  if (all || !strcmp(mode, "completion")) section_completion();
  if (all || !strcmp(mode, "order")) section_order();
  if (!strcmp(mode, "progress")) mode_progress(argc > 2 ? atoi(argv[2]) : -1);
  if (!strcmp(mode, "many")) mode_many();
  if (!strcmp(mode, "fusion")) mode_fusion();
  if (!strcmp(mode, "fresh")) mode_fresh();
  if (!all && strcmp(mode, "colls") && strcmp(mode, "completion") && strcmp(mode, "order") &&
      strcmp(mode, "progress") && strcmp(mode, "many") && strcmp(mode, "fusion") &&
      strcmp(mode, "fresh")) {
    if (g_wrank == 0)
      fprintf(stderr,
              "usage: check_nonblocking [all|colls|completion|order|progress|many|fusion|fresh|"
              "cancel|free] [return]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  phase("finish");
  MPI_Comm_free(&g_comms[1].comm);
  MPI_Comm_free(&g_comms[2].comm);
  long mine[2] = {g_pass, g_fail}, tot[2] = {0, 0};
  PMPI_Allreduce(mine, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_wrank == 0) {
    if (tot[1])
      printf("nonblocking %s: %ld of %ld cases wrong on %d ranks\n", mode, tot[1], tot[0] + tot[1],
             g_wsize);
    else
      printf("nonblocking %s: %ld cases on %d ranks right\n", mode, tot[0], g_wsize);
  }
  fflush(stdout);
  alarm(0);
  MPI_Finalize();
  return tot[1] ? 1 : 0;
}
