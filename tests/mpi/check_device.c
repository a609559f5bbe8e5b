/* Device buffers through every intercepted collective, on the simulated device of
 * gpu/sim_device.h (run with OVERPASS_SIM_DEVICE=1 and liboverpass.so preloaded): buffers live in
 * memory the host cannot touch, so a direct access by Overpass or by the MPI library crashes the
 * run. Every result is compared with the MPI library's (PMPI) on host copies of the same fresh
 * random inputs: counts 0, 1, odd and large, in place, every root, a strided datatype whose holes
 * must survive, and mixed host and device buffers across ranks (rank 1 uses host memory; with
 * --all-device no rank does, so that one node's ranks can exchange their buffers through IPC;
 * with --all-host every rank does: a host-only program where device memory could occur).
 * --repeat N: then N allreduces and bcasts of one size with the same arguments, where the device
 * algorithms decline the mixed placement and are offered again every 64 calls (the ranks must
 * count those calls alike, whether their buffers are on the device or not).
 * Prints "device: N cases on P ranks right". */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/sim_device.h"

static int rank, size, failures, cases, host_rank = 1, all_host = 0, times = 0;

/* A buffer of `bytes` on the (simulated) device, or on the host for `host_rank` (mixed
 * placements). */
static void* dev_alloc(size_t bytes) {
  if (all_host || rank == host_rank) return calloc(bytes ? bytes : 1, 1);
  void* p = overpass_sim_device_alloc(bytes);
  if (!p) {
    fprintf(stderr, "rank %d: cannot allocate simulated device memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}
static void* host_view(void* buf) {
  return all_host || rank == host_rank ? buf : overpass_sim_alias(buf);
}

static void fill(int* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (int)((seed * 2654435761u + i * 40503u) % 2001) - 1000;
}

static void expect(const char* what, const void* got, const void* want, size_t bytes, int count) {
  ++cases;
  if (memcmp(got, want, bytes) != 0) {
    ++failures;
    fprintf(stderr, "rank %d: %s count %d: wrong result\n", rank, what, count);
  }
}

static void run(int count, int root, unsigned seed) {
  const size_t n = (size_t)count, all = n * (size_t)size, nb = n * sizeof(int),
               ab = all * sizeof(int);
  const size_t room = ab > 2 * nb ? ab : 2 * nb; /* the strided case spans 2 n - 1 ints */
  int* ref_in = malloc(room + 4);
  int* ref_out = malloc(room + 4);
  int* host = malloc(room + 4);
  void* in = dev_alloc(room);
  void* out = dev_alloc(room);
  fill(ref_in, room / sizeof(int), seed + (unsigned)rank * 977u);

  /* allreduce, out of place and in place */
  memcpy(host_view(in), ref_in, nb);
  PMPI_Allreduce(ref_in, ref_out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect("allreduce", host_view(out), ref_out, nb, count);
  memcpy(host_view(out), ref_in, nb);
  MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect("allreduce in place", host_view(out), ref_out, nb, count);
  { /* doubles holding small integers (exact in any order), and a pair type */
    double* d = (double*)host;
    for (size_t i = 0; i < n; ++i) d[i] = (double)ref_in[i];
    memcpy(host_view(in), d, n * sizeof(double));
    PMPI_Allreduce(MPI_IN_PLACE, d, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect("allreduce double", host_view(out), d, n * sizeof(double), count);
    struct {
      float value;
      int index;
    }* pairs = (void*)host;
    for (size_t i = 0; i < n; ++i) {
      pairs[i].value = (float)(ref_in[i] % 7);
      pairs[i].index = rank;
    }
    memcpy(host_view(in), pairs, n * sizeof *pairs);
    PMPI_Allreduce(MPI_IN_PLACE, pairs, count, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(in, out, count, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    expect("allreduce float_int maxloc", host_view(out), pairs, n * sizeof *pairs, count);
    memcpy(host_view(in), ref_in, nb);
  }

  /* reduce */
  memset(host_view(out), 0x5a, nb);
  memcpy(host, host_view(out), nb);
  PMPI_Reduce(ref_in, host, count, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
  MPI_Reduce(in, rank == root ? out : NULL, count, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
  if (rank == root) expect("reduce", host_view(out), host, nb, count);

  /* bcast */
  memcpy(host_view(out), ref_in, nb);
  memcpy(host, ref_in, nb);
  PMPI_Bcast(host, count, MPI_INT, root, MPI_COMM_WORLD);
  MPI_Bcast(out, count, MPI_INT, root, MPI_COMM_WORLD);
  expect("bcast", host_view(out), host, nb, count);

  /* gather, scatter, allgather, alltoall, reduce_scatter_block */
  memcpy(host_view(in), ref_in, ab);
  PMPI_Gather(ref_in, count, MPI_INT, ref_out, count, MPI_INT, root, MPI_COMM_WORLD);
  MPI_Gather(in, count, MPI_INT, out, count, MPI_INT, root, MPI_COMM_WORLD);
  if (rank == root) expect("gather", host_view(out), ref_out, ab, count);
  PMPI_Scatter(ref_in, count, MPI_INT, ref_out, count, MPI_INT, root, MPI_COMM_WORLD);
  MPI_Scatter(in, count, MPI_INT, out, count, MPI_INT, root, MPI_COMM_WORLD);
  expect("scatter", host_view(out), ref_out, nb, count);
  PMPI_Allgather(ref_in, count, MPI_INT, ref_out, count, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
  expect("allgather", host_view(out), ref_out, ab, count);
  memset(host_view(out), 0x77, ab); /* in place: only the own block is input */
  memcpy((char*)host_view(out) + nb * (size_t)rank, ref_in, nb);
  PMPI_Allgather(ref_in, count, MPI_INT, ref_out, count, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, count, MPI_INT, MPI_COMM_WORLD);
  expect("allgather in place", host_view(out), ref_out, ab, count);
  PMPI_Alltoall(ref_in, count, MPI_INT, ref_out, count, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
  expect("alltoall", host_view(out), ref_out, ab, count);
  memcpy(host_view(out), ref_in, ab);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, count, MPI_INT, MPI_COMM_WORLD);
  expect("alltoall in place", host_view(out), ref_out, ab, count);
  PMPI_Reduce_scatter_block(ref_in, ref_out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect("reduce_scatter_block", host_view(out), ref_out, nb, count);

  /* a strided type: every other int; the ints in between must keep their values */
  if (count > 0) {
    MPI_Datatype every_other;
    MPI_Type_vector(count, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    const size_t span = (2 * n - 1) * sizeof(int);
    memcpy(host_view(out), ref_in, span);
    memcpy(host, ref_in, span);
    if (rank != root) { /* non-roots start from other values: the holes must stay theirs */
      for (size_t i = 0; i < n; ++i) ((int*)host)[2 * i] = -1;
      memcpy(host_view(out), host, span);
    }
    PMPI_Bcast(host, 1, every_other, root, MPI_COMM_WORLD);
    MPI_Bcast(out, 1, every_other, root, MPI_COMM_WORLD);
    expect("bcast strided", host_view(out), host, span, count);
    MPI_Type_free(&every_other);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(ref_in);
  free(ref_out);
  free(host);
  if (rank == host_rank) {
    free(in);
    free(out);
  }
}

/* `times` calls of allreduce and bcast of `count` ints, the same arguments every time. */
static void repeat(int times, int count) {
  const size_t nb = (size_t)count * sizeof(int);
  int* ref_in = malloc(nb);
  int* ref_out = malloc(nb);
  void* in = dev_alloc(nb);
  void* out = dev_alloc(nb);
  for (int t = 0; t < times; ++t) {
    fill(ref_in, (size_t)count, 7919u * (unsigned)t + (unsigned)rank);
    memcpy(host_view(in), ref_in, nb);
    PMPI_Allreduce(ref_in, ref_out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect("repeated allreduce", host_view(out), ref_out, nb, count);
    memcpy(host_view(out), ref_in, nb);
    memcpy(ref_out, ref_in, nb);
    PMPI_Bcast(ref_out, count, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(out, count, MPI_INT, 0, MPI_COMM_WORLD);
    expect("repeated bcast", host_view(out), ref_out, nb, count);
  }
  free(ref_in);
  free(ref_out);
  if (all_host || rank == host_rank) {
    free(in);
    free(out);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--all-device") == 0)
      host_rank = -1;
    else if (strcmp(argv[i], "--all-host") == 0)
      all_host = 1;
    else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      times = atoi(argv[++i]);
  const int counts[] = {0, 1, 7, 1001, 70000};
  unsigned seed = 1;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c)
    for (int root = 0; root < size; ++root) run(counts[c], root, seed++);
  repeat(times, 70000);
  int total = 0, wrong = 0;
  MPI_Reduce(&cases, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&failures, &wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    if (wrong)
      printf("device: %d of %d cases wrong\n", wrong, total);
    else
      printf("device: %d cases on %d ranks right\n", total, size);
  }
  MPI_Finalize();
  return wrong != 0;
}
