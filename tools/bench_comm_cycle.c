/* overpass-bench-comms: the cost of short-lived communicators. Times cycles of
 *   create a communicator (MPI_Comm_dup of MPI_COMM_WORLD, or MPI_Comm_split) + K collectives
 *   (alternately an 8-byte MPI_Allreduce and an 8-byte MPI_Bcast) + MPI_Comm_free
 * for each K asked for, and prints rank 0's median time per cycle over the repetitions. A plain
 * MPI program: run it with and without liboverpass.so preloaded (docs/PERFORMANCE.md).
 *
 *   overpass-bench-comms [-n CYCLES] [-r REPS] [-k K1,K2,...] [--split] [--live L]
 *
 * --split: MPI_Comm_split(MPI_COMM_WORLD, 0, rank) instead of MPI_Comm_dup.
 * --live L: keep L communicators alive and free the oldest at each cycle (a pool of L). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void usage(int rank, const char* why) {
  if (rank == 0) {
    if (why) fprintf(stderr, "overpass-bench-comms: %s\n", why);
    fprintf(stderr,
            "usage: overpass-bench-comms [-n CYCLES] [-r REPS] [-k K1,K2,...] [--split] "
            "[--live L]\n"
            "  times CYCLES x (create a communicator + K collectives + MPI_Comm_free) per K, "
            "REPS times;\n  prints the median time per cycle (rank 0)\n");
  }
}

static int parsePositive(const char* s, long* out) {
  char* end = NULL;
  const long v = strtol(s, &end, 10);
  if (!*s || *end || v <= 0 || v > 100000000) return 0;
  *out = v;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long cycles = 1000, reps = 5, live = 1;
  long ks[16] = {1, 10, 100};
  int nk = 3, split = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(rank, NULL);
      MPI_Finalize();
      return 0;
    } else if (!strcmp(a, "--split")) {
      split = 1;
    } else if ((!strcmp(a, "-n") || !strcmp(a, "-r") || !strcmp(a, "--live")) && value) {
      long v = 0;
      if (!parsePositive(value, &v)) {
        usage(rank, "a positive number is expected after -n, -r and --live");
        MPI_Finalize();
        return 2;
      }
      *(!strcmp(a, "-n") ? &cycles : !strcmp(a, "-r") ? &reps : &live) = v;
      ++i;
    } else if (!strcmp(a, "-k") && value) {
      char copy[256];
      snprintf(copy, sizeof copy, "%s", value);
      nk = 0;
      for (char* t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
        if (nk == 16 || !parsePositive(t, &ks[nk])) {
          usage(rank, "-k takes up to 16 positive numbers separated by commas");
          MPI_Finalize();
          return 2;
        }
        ++nk;
      }
      ++i;
    } else {
      usage(rank, "unknown or incomplete argument");
      MPI_Finalize();
      return 2;
    }
  }
  if (reps > 1000) reps = 1000;
  MPI_Comm* window = calloc((size_t)live, sizeof(MPI_Comm));
  double* times = calloc((size_t)reps, sizeof(double));
  long wrong = 0;
  if (rank == 0)
    printf("# %d ranks, %ld cycles x %ld repetitions, %s, %ld live\n# K  us_per_cycle_median  "
           "us_per_cycle_min  us_per_collective_median\n",
           size, cycles, reps, split ? "MPI_Comm_split" : "MPI_Comm_dup", live);
  for (int k = 0; k < nk; ++k) {
    for (long r = 0; r < reps; ++r) {
      for (long l = 0; l < live; ++l) window[l] = MPI_COMM_NULL;
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      for (long c = 0; c < cycles; ++c) {
        MPI_Comm* slot = &window[c % live];
        if (*slot != MPI_COMM_NULL) MPI_Comm_free(slot);
        if (split)
          MPI_Comm_split(MPI_COMM_WORLD, 0, rank, slot);
        else
          MPI_Comm_dup(MPI_COMM_WORLD, slot);
        for (long j = 0; j < ks[k]; ++j) {
          double x = rank + 1 + (double)j, y = 0;
          if (j % 2 == 0) {
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, *slot);
            wrong += y != size * (size + 1) / 2.0 + (double)j * size;
          } else {
            y = rank == 0 ? x : -1;
            MPI_Bcast(&y, 1, MPI_DOUBLE, 0, *slot);
            wrong += y != 1 + (double)j;
          }
        }
      }
      for (long l = 0; l < live; ++l)
        if (window[l] != MPI_COMM_NULL) MPI_Comm_free(&window[l]);
      times[r] = (MPI_Wtime() - start) / (double)cycles * 1e6;
    }
    qsort(times, (size_t)reps, sizeof(double), compareDoubles);
    const double median = times[reps / 2];
    if (rank == 0)
      printf("%ld %.2f %.2f %.3f\n", ks[k], median, times[0], median / (double)ks[k]);
  }
  long wrongAll = 0;
  MPI_Reduce(&wrong, &wrongAll, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("# wrong results: %ld\n", wrongAll);
  free(times);
  free(window);
  MPI_Finalize();
  return wrongAll != 0;
}
