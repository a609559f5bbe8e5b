/* Communicators that come and go: the warm-up of new communicators (their first calls go to the
 * MPI library), the pool of engines reused by communicators over the same ranks, and many
 * communicators alive at once. Every result is compared with what the MPI library computes
 * (PMPI on the same communicator). Modes (argv[1]):
 *   boundary       calls 1..32 (every collective twice) on fresh communicators of several shapes
 *                  (dup, dup of dup, splits), across the end of the warm-up
 *   cycles N K     N cycles of dup + K allreduce/bcast + free (engines reused from the pool)
 *   many N         N communicators alive at once, each past its warm-up (3 barriers) and then
 *                  one allreduce and one bcast
 *   resplit N      N cycles of a communicator made, past its warm-up, the same calls twice
 *                  (allreduce, allgather, bcast: a repeated call reuses its decision, shim/
 *                  dispatch.cc), freed; the communicators alternate between the whole world and
 *                  halves of it, so that a freed one's handle comes back for one of another size
 *   deterministic  the first allreduce and reduce of doubles on fresh communicators equal the
 *                  serial rank-order sums bit for bit (run with OVERPASS_DETERMINISTIC=1)
 *   vectors N      N rounds of the five vector collectives on one communicator, the same
 *                  arguments and arrays every time, the arrays' contents alternating every two
 *                  rounds between two layouts: only rank 0's block differs (its count, so on every
 *                  other rank only the arrays change, not the scalar arguments), by enough to move
 *                  the mean block of allgatherv and reduce_scatter across 600 bytes (a repeated
 *                  call reuses its decision only where its arrays are equal too, shim/dispatch.cc:
 *                  run with rules that pick one algorithm below that size and another above);
 *                  every four rounds in place (allgatherv, reduce_scatter, the root of gatherv and
 *                  scatterv) or not */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long g_fail = 0, g_pass = 0;

static void expect(int ok, const char* what, const char* comm, int call) {
  if (ok) {
    ++g_pass;
    return;
  }
  ++g_fail;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "rank %d: %s on %s, call %d: wrong result\n", rank, what, comm, call);
}

enum { kColls = 16, kCount = 300 }; /* 1200-byte blocks: past the tiny rooted rules */

/* Irregular counts and displacements of the vector calls: rank q's block has n - (37 q mod 50)
 * elements, rank 3's none, placed in reverse rank order with a gap of one element after each. */
static int vcount(int q, int n) {
  return q == 3 ? 0 : n - (37 * q) % 50;
}
static void vlayout(int size, int n, int* counts, int* displs) {
  int at = 0;
  for (int q = size - 1; q >= 0; --q) {
    counts[q] = vcount(q, n);
    displs[q] = at;
    at += counts[q] + 1;
  }
}

/* Call `call` (1-based) on `comm`: collective (call - 1) mod kColls, checked against PMPI. */
static void one_call(MPI_Comm comm, const char* name, int call) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = kCount;
  /* Room for the vector calls' layouts: n + 1 elements per rank. */
  const int all = (n + 1) * size;
  int* in = malloc(sizeof(int) * all);
  int* out = malloc(sizeof(int) * all);
  int* ref = malloc(sizeof(int) * all);
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  int* rcounts = malloc(sizeof(int) * size);
  int* rdispls = malloc(sizeof(int) * size);
  for (int i = 0; i < all; ++i) in[i] = (rank + 1) * 1000 + i * 7 + call;
  memset(out, 0, sizeof(int) * all);
  memset(ref, 0, sizeof(int) * all);
  vlayout(size, n, counts, displs);
  const int root = (call + size - 1) % size;
  int ok = 1;
  switch ((call - 1) % kColls) {
    case 0:
      MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
      PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, comm);
      ok = !memcmp(out, ref, sizeof(int) * n);
      expect(ok, "allreduce", name, call);
      break;
    case 1:
      memcpy(out, in, sizeof(int) * n);
      memcpy(ref, in, sizeof(int) * n);
      MPI_Bcast(out, n, MPI_INT, root, comm);
      PMPI_Bcast(ref, n, MPI_INT, root, comm);
      expect(!memcmp(out, ref, sizeof(int) * n), "bcast", name, call);
      break;
    case 2:
      MPI_Reduce(in, out, n, MPI_INT, MPI_MAX, root, comm);
      PMPI_Reduce(in, ref, n, MPI_INT, MPI_MAX, root, comm);
      expect(rank != root || !memcmp(out, ref, sizeof(int) * n), "reduce", name, call);
      break;
    case 3:
      MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
      PMPI_Allgather(in, n, MPI_INT, ref, n, MPI_INT, comm);
      expect(!memcmp(out, ref, sizeof(int) * n * size), "allgather", name, call);
      break;
    case 4:
      MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm);
      PMPI_Alltoall(in, n, MPI_INT, ref, n, MPI_INT, comm);
      expect(!memcmp(out, ref, sizeof(int) * n * size), "alltoall", name, call);
      break;
    case 5:
      MPI_Gather(in, n, MPI_INT, out, n, MPI_INT, root, comm);
      PMPI_Gather(in, n, MPI_INT, ref, n, MPI_INT, root, comm);
      expect(rank != root || !memcmp(out, ref, sizeof(int) * n * size), "gather", name, call);
      break;
    case 6:
      MPI_Scatter(in, n, MPI_INT, out, n, MPI_INT, root, comm);
      PMPI_Scatter(in, n, MPI_INT, ref, n, MPI_INT, root, comm);
      expect(!memcmp(out, ref, sizeof(int) * n), "scatter", name, call);
      break;
    case 7:
      MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, comm);
      PMPI_Reduce_scatter_block(in, ref, n, MPI_INT, MPI_SUM, comm);
      expect(!memcmp(out, ref, sizeof(int) * n), "reduce_scatter_block", name, call);
      break;
    case 8:
      expect(MPI_Barrier(comm) == MPI_SUCCESS, "barrier", name, call);
      break;
    case 9:
      MPI_Allgatherv(in, counts[rank], MPI_INT, out, counts, displs, MPI_INT, comm);
      PMPI_Allgatherv(in, counts[rank], MPI_INT, ref, counts, displs, MPI_INT, comm);
      expect(!memcmp(out, ref, sizeof(int) * all), "allgatherv", name, call);
      break;
    case 10:
      /* Rank r sends rank q vcount((r + q) % size) elements; the blocks in reverse order. */
      for (int q = 0; q < size; ++q) {
        counts[q] = vcount((rank + q) % size, n);
        rcounts[q] = vcount((q + rank) % size, n);
      }
      for (int q = size - 1, at = 0, rat = 0; q >= 0; --q) {
        displs[q] = at;
        rdispls[q] = rat;
        at += counts[q] + 1;
        rat += rcounts[q] + 1;
      }
      MPI_Alltoallv(in, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, comm);
      PMPI_Alltoallv(in, counts, displs, MPI_INT, ref, rcounts, rdispls, MPI_INT, comm);
      expect(!memcmp(out, ref, sizeof(int) * all), "alltoallv", name, call);
      break;
    case 11:
      MPI_Gatherv(in, counts[rank], MPI_INT, out, counts, displs, MPI_INT, root, comm);
      PMPI_Gatherv(in, counts[rank], MPI_INT, ref, counts, displs, MPI_INT, root, comm);
      expect(rank != root || !memcmp(out, ref, sizeof(int) * all), "gatherv", name, call);
      break;
    case 12:
      MPI_Scatterv(in, counts, displs, MPI_INT, out, counts[rank], MPI_INT, root, comm);
      PMPI_Scatterv(in, counts, displs, MPI_INT, ref, counts[rank], MPI_INT, root, comm);
      expect(!memcmp(out, ref, sizeof(int) * n), "scatterv", name, call);
      break;
    case 13:
      MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm);
      PMPI_Reduce_scatter(in, ref, counts, MPI_INT, MPI_SUM, comm);
      expect(!memcmp(out, ref, sizeof(int) * n), "reduce_scatter", name, call);
      break;
    case 14:
      MPI_Scan(in, out, n, MPI_INT, MPI_SUM, comm);
      PMPI_Scan(in, ref, n, MPI_INT, MPI_SUM, comm);
      expect(!memcmp(out, ref, sizeof(int) * n), "scan", name, call);
      break;
    default:
      MPI_Exscan(in, out, n, MPI_INT, MPI_MAX, comm);
      PMPI_Exscan(in, ref, n, MPI_INT, MPI_MAX, comm);
      expect(rank == 0 || !memcmp(out, ref, sizeof(int) * n), "exscan", name, call);
      break;
  }
  free(in);
  free(out);
  free(ref);
  free(counts);
  free(displs);
  free(rcounts);
  free(rdispls);
}

static void boundary(void) {
  int W, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &W);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  for (int round = 0; round < 2; ++round) { /* the second round reuses the pooled engines */
    MPI_Comm comms[5];
    const char* names[5] = {"dup(world)", "dup(dup(world))", "split(halves)", "split(reversed)",
                            "split(rank%2)"};
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(comms[0], &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, W < P / 2, W, &comms[2]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - W, &comms[3]);
    MPI_Comm_split(comms[1], W % 2, W, &comms[4]);
    /* Interleaved: calls on different communicators alternate, as in applications. */
    for (int call = 1; call <= 2 * kColls; ++call)
      for (int c = 0; c < 5; ++c) one_call(comms[c], names[c], call);
    for (int c = 4; c >= 0; --c) MPI_Comm_free(&comms[c]);
  }
}

static void cycles(int n, int k) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int c = 0; c < n; ++c) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int j = 0; j < k; ++j) {
      double x = rank + 1 + j + c, y = 0;
      if (j % 2 == 0) {
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
        expect(y == size * (size + 1) / 2.0 + (double)(j + c) * size, "allreduce", "cycle", j + 1);
      } else {
        y = rank == 0 ? x : -1;
        MPI_Bcast(&y, 1, MPI_DOUBLE, 0, comm);
        expect(y == 1.0 + j + c, "bcast", "cycle", j + 1);
      }
    }
    MPI_Comm_free(&comm);
  }
}

static void many(int n) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm* comms = malloc(sizeof(MPI_Comm) * n);
  for (int c = 0; c < n; ++c) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
    for (int b = 0; b < 3; ++b) MPI_Barrier(comms[c]); /* the warm-up */
    double x = rank + c, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comms[c]);
    expect(y == size * (size - 1) / 2.0 + (double)c * size, "allreduce", "many", c);
  }
  for (int c = 0; c < n; ++c) { /* every one of them still right while all are alive */
    double y = rank == c % size ? c : -1;
    MPI_Bcast(&y, 1, MPI_DOUBLE, c % size, comms[c]);
    expect(y == c, "bcast", "many", c);
  }
  for (int c = 0; c < n; ++c) MPI_Comm_free(&comms[c]);
  free(comms);
}

static void resplit(int n) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int c = 0; c < n; ++c) {
    MPI_Comm comm;
    if (c % 2 == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comm);
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    for (int b = 0; b < 3; ++b) MPI_Barrier(comm); /* the warm-up */
    for (int twice = 0; twice < 2; ++twice) {
      double x = me + 1 + c, y = 0, all[64], z = me == 0 ? c : -1;
      MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
      expect(y == p * (p + 1) / 2.0 + (double)c * p, "allreduce", "resplit", c);
      for (int q = 0; q < 64; ++q) all[q] = -1;
      MPI_Allgather(&x, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, comm);
      int ok = 1;
      for (int q = 0; q < 64; ++q) ok &= all[q] == (q < p ? q + 1 + c : -1);
      expect(ok, "allgather", "resplit", c);
      MPI_Bcast(&z, 1, MPI_DOUBLE, 0, comm);
      expect(z == c, "bcast", "resplit", c);
    }
    MPI_Comm_free(&comm);
  }
}

/* Values whose sum depends on the order: only the serial left-to-right order gives `serial`. */
static void deterministic(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double values[4] = {1e16, 1.0, -1e16, 1.0};
  for (int c = 0; c < 4; ++c) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    double x[3], all[3 * 64], serial[3] = {0, 0, 0}, y[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) x[i] = values[(rank + i + c) % 4] * (1 + 0.25 * i);
    PMPI_Allgather(x, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, comm);
    for (int r = 0; r < size && r < 64; ++r)
      for (int i = 0; i < 3; ++i) serial[i] = r == 0 ? all[i] : serial[i] + all[3 * r + i];
    if (c % 2 == 0) {
      MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_SUM, comm); /* the first call on `comm` */
      expect(!memcmp(y, serial, sizeof y), "deterministic allreduce", "fresh dup", 1);
    } else {
      MPI_Reduce(x, y, 3, MPI_DOUBLE, MPI_SUM, 0, comm);
      expect(rank != 0 || !memcmp(y, serial, sizeof y), "deterministic reduce", "fresh dup", 1);
    }
    MPI_Comm_free(&comm);
  }
}

/* The layout of round `round` (two alike in a row): rank q's block `base` elements, rank 0's
 * `base` or `base + 2 size base`, placed in reverse rank order with a gap of one element. */
static void vectors_layout(int round, int size, int base, int* counts, int* displs) {
  for (int q = size - 1, at = 0; q >= 0; --q) {
    counts[q] = q == 0 && round / 2 % 2 ? base + 2 * size * base : base;
    displs[q] = at;
    at += counts[q] + 1;
  }
}

/* Both sides of one vector call: `out` by MPI_<coll>, `ref` by PMPI_<coll>, each from its own
 * copy of the same buffer (in place: the input already in it). */
static int vectors_call(int c, int inplace, MPI_Comm comm, const int* in, int* out, int* ref,
                        int all, const int* counts, const int* displs) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = counts[rank], root = 1 % size;
  int* bufs[2] = {out, ref};
  for (int b = 0; b < 2; ++b) {
    memset(bufs[b], 0, sizeof(int) * all);
    if (inplace && c == 0) /* allgatherv: this rank's block at its place */
      memcpy(bufs[b] + displs[rank], in, sizeof(int) * mine);
    if (inplace && c == 2 && rank == root) /* gatherv: the root's block at its place */
      memcpy(bufs[b] + displs[rank], in, sizeof(int) * mine);
    if (inplace && c == 4) /* reduce_scatter: the whole vector */
      memcpy(bufs[b], in, sizeof(int) * all);
  }
  const void* send = inplace ? MPI_IN_PLACE : in;
  switch (c) {
    case 0:
      MPI_Allgatherv(send, mine, MPI_INT, out, counts, displs, MPI_INT, comm);
      PMPI_Allgatherv(send, mine, MPI_INT, ref, counts, displs, MPI_INT, comm);
      return !memcmp(out, ref, sizeof(int) * all);
    case 1: { /* never in place: rank r sends rank q counts[q] and receives counts[r] from each */
      int* rcounts = malloc(sizeof(int) * size);
      int* rdispls = malloc(sizeof(int) * size);
      for (int q = 0, at = 0; q < size; ++q) {
        rcounts[q] = mine;
        rdispls[q] = at;
        at += mine + 1;
      }
      MPI_Alltoallv(in, counts, displs, MPI_INT, out, rcounts, rdispls, MPI_INT, comm);
      PMPI_Alltoallv(in, counts, displs, MPI_INT, ref, rcounts, rdispls, MPI_INT, comm);
      free(rcounts);
      free(rdispls);
      return !memcmp(out, ref, sizeof(int) * all);
    }
    case 2:
      if (inplace && rank == root) {
        MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts, displs, MPI_INT, root, comm);
        PMPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ref, counts, displs, MPI_INT, root, comm);
      } else {
        MPI_Gatherv(in, mine, MPI_INT, out, counts, displs, MPI_INT, root, comm);
        PMPI_Gatherv(in, mine, MPI_INT, ref, counts, displs, MPI_INT, root, comm);
      }
      return rank != root || !memcmp(out, ref, sizeof(int) * all);
    case 3:
      if (inplace && rank == root) {
        MPI_Scatterv(in, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm);
        PMPI_Scatterv(in, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm);
      } else {
        MPI_Scatterv(in, counts, displs, MPI_INT, out, mine, MPI_INT, root, comm);
        PMPI_Scatterv(in, counts, displs, MPI_INT, ref, mine, MPI_INT, root, comm);
      }
      return !memcmp(out, ref, sizeof(int) * all);
    default: /* in place, only this rank's block of the result is defined */
      MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : in, out, counts, MPI_INT, MPI_SUM, comm);
      PMPI_Reduce_scatter(inplace ? MPI_IN_PLACE : in, ref, counts, MPI_INT, MPI_SUM, comm);
      return !memcmp(out, ref, sizeof(int) * (inplace ? mine : all));
  }
}

static void vectors(int rounds) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  for (int b = 0; b < 3; ++b) MPI_Barrier(comm); /* the warm-up */
  const int base = 100; /* 400-byte blocks; rank 0's large: 400 (2p + 1), the mean 1200 */
  const int all = size * ((2 * size + 1) * base + 1); /* every layout's span, each side */
  int* in = malloc(sizeof(int) * all);
  int* out = malloc(sizeof(int) * all);
  int* ref = malloc(sizeof(int) * all);
  int* counts = malloc(sizeof(int) * size);
  int* displs = malloc(sizeof(int) * size);
  const char* names[5] = {"allgatherv", "alltoallv", "gatherv", "scatterv", "reduce_scatter"};
  for (int round = 0; round < rounds; ++round) {
    vectors_layout(round, size, base, counts, displs);
    for (int i = 0; i < all; ++i) in[i] = (rank + 1) * 1000 + i * 7 + round;
    const int inplace = round / 4 % 2; /* four rounds out of place, four in place */
    for (int c = 0; c < 5; ++c)
      expect(vectors_call(c, inplace, comm, in, out, ref, all, counts, displs), names[c],
             inplace ? "vectors in place" : "vectors", round);
  }
  free(in);
  free(out);
  free(ref);
  free(counts);
  free(displs);
  MPI_Comm_free(&comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "boundary";
  if (!strcmp(mode, "boundary"))
    boundary();
  else if (!strcmp(mode, "cycles"))
    cycles(argc > 2 ? atoi(argv[2]) : 100, argc > 3 ? atoi(argv[3]) : 6);
  else if (!strcmp(mode, "many"))
    many(argc > 2 ? atoi(argv[2]) : 200);
  else if (!strcmp(mode, "resplit"))
    resplit(argc > 2 ? atoi(argv[2]) : 100);
  else if (!strcmp(mode, "deterministic"))
    deterministic();
  else if (!strcmp(mode, "vectors"))
    vectors(argc > 2 ? atoi(argv[2]) : 40);
  long mine[2] = {g_pass, g_fail}, tot[2] = {0, 0};
  PMPI_Allreduce(mine, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("check_comms %s: %ld passed, %ld failed\n", mode, tot[0], tot[1]);
  fflush(stdout);
  MPI_Finalize();
  return tot[1] ? 1 : 0;
}
