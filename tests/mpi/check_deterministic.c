/* Deterministic mode (OVERPASS_DETERMINISTIC=1): floating-point and user-defined reductions must
 * equal, bit for bit, the combination of the ranks' contributions in rank order,
 * ((x0 + x1) + x2) + ..., computed here serially on gathered inputs. The data spans 16 orders of
 * magnitude, so that another order gives other bits. Allreduce (in place and not), reduce at
 * every root, reduce_scatter_block, reduce_scatter (uneven blocks, one empty), scan and exscan
 * (prefixes: ranks 0..r and 0..r-1); double, float, a complex type and a user-defined sum.
 * Prints a hash of every result, so that runs can also be compared with each other. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;
static uint64_t hash = 1469598103934665603ull;

static void mix(const void* data, size_t bytes) {
  const unsigned char* p = data;
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
}

static double value(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  const double unit = (double)(*state >> 11) / 9007199254740992.0 * 2 - 1;
  return unit * pow(10.0, (double)((*state >> 3) % 17) - 8);
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((double*)inout)[i] = ((double*)in)[i] + ((double*)inout)[i];
}

enum Kind { kDouble, kFloat, kComplex, kUser };
static const char* kind_name[] = {"double", "float", "complex", "user-op double"};

/* `n` scalars (reals; a complex element is 2) of rank r's input. */
static void fill(void* buf, int kind, size_t n, int r, int salt) {
  uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1) + (uint64_t)salt * 7919u + n;
  for (size_t i = 0; i < n; ++i) {
    if (kind == kFloat)
      ((float*)buf)[i] = (float)value(&state);
    else
      ((double*)buf)[i] = value(&state);
  }
}

/* The rank-order reference at rank 0: inputs of every rank gathered, combined left to right. */
static void reference(const void* mine, void* out, int kind, size_t n, size_t scalar) {
  void* all = malloc(n * scalar * size + 1);
  MPI_Gather(mine, (int)(n * scalar), MPI_BYTE, all, (int)(n * scalar), MPI_BYTE, 0,
             MPI_COMM_WORLD);
  if (rank == 0) {
    memcpy(out, all, n * scalar);
    for (int q = 1; q < size; ++q)
      for (size_t i = 0; i < n; ++i) {
        if (kind == kFloat)
          ((float*)out)[i] = ((float*)out)[i] + ((float*)all + q * n)[i];
        else
          ((double*)out)[i] = ((double*)out)[i] + ((double*)all + q * n)[i];
      }
  }
  MPI_Bcast(out, (int)(n * scalar), MPI_BYTE, 0, MPI_COMM_WORLD);
  free(all);
}

/* The rank-order prefix of ranks 0..last (last >= 0), at every rank: inputs gathered, combined
 * left to right. */
static void prefix(const void* mine, void* out, int kind, size_t n, size_t scalar, int last) {
  void* all = malloc(n * scalar * size + 1);
  MPI_Allgather(mine, (int)(n * scalar), MPI_BYTE, all, (int)(n * scalar), MPI_BYTE,
                MPI_COMM_WORLD);
  memcpy(out, all, n * scalar);
  for (int q = 1; q <= last; ++q)
    for (size_t i = 0; i < n; ++i) {
      if (kind == kFloat)
        ((float*)out)[i] = ((float*)out)[i] + ((float*)all + q * n)[i];
      else
        ((double*)out)[i] = ((double*)out)[i] + ((double*)all + q * n)[i];
    }
  free(all);
}

static void expect_equal(const void* got, const void* want, size_t bytes, const char* what,
                         int kind, int count) {
  mix(got, bytes);
  if (memcmp(got, want, bytes) != 0) {
    ++failures;
    if (failures < 10)
      fprintf(stderr, "rank %d: %s of %d %s elements differs from the rank-order sum\n", rank, what,
              count, kind_name[kind]);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Op user;
  MPI_Op_create(user_sum, 1, &user);
  const int counts[] = {0, 1, 3, 7, 100, 1001, 65539};
  int cases = 0;
  for (int kind = kDouble; kind <= kUser; ++kind) {
    const MPI_Datatype type = kind == kFloat     ? MPI_FLOAT
                              : kind == kComplex ? MPI_C_DOUBLE_COMPLEX
                                                 : MPI_DOUBLE;
    const MPI_Op op = kind == kUser ? user : MPI_SUM;
    const size_t per = kind == kComplex ? 2 : 1; /* scalars per element */
    const size_t scalar = kind == kFloat ? sizeof(float) : sizeof(double);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
      const int count = counts[c];
      const size_t n = (size_t)count * per, bytes = n * scalar;
      /* allreduce, out of place and in place */
      void* in = malloc(bytes * size + 1);
      void* out = malloc(bytes * size + 1);
      void* want = malloc(bytes * size + 1);
      fill(in, kind, n, rank, 1);
      reference(in, want, kind, n, scalar);
      MPI_Allreduce(in, out, count, type, op, MPI_COMM_WORLD);
      expect_equal(out, want, bytes, "allreduce", kind, count);
      memcpy(out, in, bytes);
      MPI_Allreduce(MPI_IN_PLACE, out, count, type, op, MPI_COMM_WORLD);
      expect_equal(out, want, bytes, "in-place allreduce", kind, count);
      /* reduce at every root */
      for (int root = 0; root < size; ++root) {
        memset(out, 0, bytes + 1);
        MPI_Reduce(in, out, count, type, op, root, MPI_COMM_WORLD);
        if (rank == root) expect_equal(out, want, bytes, "reduce", kind, count);
      }
      /* reduce_scatter_block: p blocks of `count` */
      fill(in, kind, n * size, rank, 2);
      reference(in, want, kind, n * size, scalar);
      MPI_Reduce_scatter_block(in, out, count, type, op, MPI_COMM_WORLD);
      expect_equal(out, (char*)want + rank * bytes, bytes, "reduce_scatter_block", kind, count);
      /* reduce_scatter: rank q's block of (q % 3) * count elements (rank 0's empty) */
      int* rcounts = malloc(sizeof(int) * size);
      size_t total = 0, before = 0;
      for (int q = 0; q < size; ++q) {
        rcounts[q] = (q % 3) * count;
        if (q < rank) before += (size_t)rcounts[q];
        total += (size_t)rcounts[q];
      }
      void* whole = malloc(total * per * scalar + 1);
      void* wantAll = malloc(total * per * scalar + 1);
      fill(whole, kind, total * per, rank, 3);
      reference(whole, wantAll, kind, total * per, scalar);
      MPI_Reduce_scatter(whole, out, rcounts, type, op, MPI_COMM_WORLD);
      expect_equal(out, (char*)wantAll + before * per * scalar,
                   (size_t)rcounts[rank] * per * scalar, "reduce_scatter", kind, rcounts[rank]);
      free(whole);
      free(wantAll);
      free(rcounts);
      /* scan and exscan, out of place and in place; exscan's rank 0 is not compared */
      fill(in, kind, n, rank, 4);
      prefix(in, want, kind, n, scalar, rank);
      MPI_Scan(in, out, count, type, op, MPI_COMM_WORLD);
      expect_equal(out, want, bytes, "scan", kind, count);
      memcpy(out, in, bytes);
      MPI_Scan(MPI_IN_PLACE, out, count, type, op, MPI_COMM_WORLD);
      expect_equal(out, want, bytes, "in-place scan", kind, count);
      prefix(in, want, kind, n, scalar, rank > 0 ? rank - 1 : 0);
      MPI_Exscan(in, out, count, type, op, MPI_COMM_WORLD);
      if (rank > 0) expect_equal(out, want, bytes, "exscan", kind, count);
      memcpy(out, in, bytes);
      MPI_Exscan(MPI_IN_PLACE, out, count, type, op, MPI_COMM_WORLD);
      if (rank > 0) expect_equal(out, want, bytes, "in-place exscan", kind, count);
      free(in);
      free(out);
      free(want);
      cases += 8 + size;
    }
  }
  /* Every rank's results must hash alike (results themselves equal the reference already). */
  uint64_t hashes[64];
  MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf(
          "deterministic: %d cases on %d ranks bitwise equal to the rank-order reference; "
          "hash %016llx\n",
          cases, size, (unsigned long long)hashes[0]);
    else
      printf("deterministic: %d results differ from the rank-order reference\n", total);
  }
  MPI_Op_free(&user);
  MPI_Finalize();
  return total != 0;
}
