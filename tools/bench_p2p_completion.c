/* overpass-bench-p2p: the cost of completion calls on the program's own point-to-point requests,
 * the tax an interposer that also serves nonblocking collectives (MPI_Test and MPI_Wait must
 * tell its requests from the MPI library's) puts on programs that use none. Two ranks; per case
 * the time per call on rank 0, median over the repetitions (with their minimum and maximum):
 *
 *   pingpong     8-byte MPI_Isend / MPI_Irecv, each completed by MPI_Wait: per round trip
 *                (rank 0: Isend, Wait, Irecv, Wait; rank 1 the mirror image)
 *   test-done    MPI_Test on a request already complete (a receive of a message sent to self
 *                before it was posted): flag 1 at the first call, the request freed
 *   wait-done    MPI_Wait on such a request
 *   test-pending MPI_Test on a receive whose send comes later (rank 1 sends once rank 0 has
 *                finished testing): flag 0, one pass of the library's progress engine
 *
 * A plain MPI program: run it with and without liboverpass.so preloaded (docs/PERFORMANCE.md).
 *
 *   overpass-bench-p2p [-n CALLS] [-r REPS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kChunk = 256, kTagData = 1, kTagGo = 2, kMaxReps = 100000 };

static const char kUsage[] =
    "usage: overpass-bench-p2p [-n CALLS] [-r REPS]  (2 ranks)\n"
    "  times completion calls on point-to-point requests, rank 0's ns per call, median of REPS\n"
    "  repetitions of CALLS calls each (defaults 20000 and 11):\n"
    "    pingpong      8-byte MPI_Isend/MPI_Irecv + MPI_Wait, per round trip\n"
    "    test-done     MPI_Test on an already complete request (flag 1, request freed)\n"
    "    wait-done     MPI_Wait on an already complete request\n"
    "    test-pending  MPI_Test on a receive whose send comes later (flag 0)\n";

static int compareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static int parsePositive(const char* s, long max, long* out) {
  char* end = NULL;
  const long v = strtol(s, &end, 10);
  if (!*s || *end || v <= 0 || v > max) return 0;
  *out = v;
  return 1;
}

/* Rank 0: the seconds of `calls` round trips. */
static double pingpong(int rank, long calls) {
  double ping = 0, pong = 0;
  MPI_Request req;
  const int peer = 1 - rank;
  const double start = MPI_Wtime();
  for (long i = 0; i < calls; ++i) {
    if (rank == 0) {
      MPI_Isend(&ping, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      MPI_Irecv(&pong, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Irecv(&pong, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      MPI_Isend(&ping, 1, MPI_DOUBLE, peer, kTagData, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  }
  return MPI_Wtime() - start;
}

/* The seconds of `calls` MPI_Test (wait = 0) or MPI_Wait calls on complete receives, timed in
 * chunks: each chunk's receives are of messages this rank sent itself before posting them, so
 * they are complete when posted; the sends are completed outside the timing. *notDone counts
 * the tests that found a request incomplete (expected 0). */
static double completeRequests(long calls, int wait, long* notDone) {
  static double sent[kChunk], got[kChunk];
  MPI_Request sends[kChunk], recvs[kChunk];
  int self = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &self);
  double seconds = 0;
  for (long done = 0; done < calls; done += kChunk) {
    const int n = calls - done < kChunk ? (int)(calls - done) : kChunk;
    for (int i = 0; i < n; ++i)
      MPI_Isend(&sent[i], 1, MPI_DOUBLE, self, kTagData, MPI_COMM_WORLD, &sends[i]);
    for (int i = 0; i < n; ++i)
      MPI_Irecv(&got[i], 1, MPI_DOUBLE, self, kTagData, MPI_COMM_WORLD, &recvs[i]);
    MPI_Waitall(n, sends, MPI_STATUSES_IGNORE);
    int flag = 1;
    const double start = MPI_Wtime();
    if (wait) {
      for (int i = 0; i < n; ++i) MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
    } else {
      for (int i = 0; i < n; ++i) {
        MPI_Test(&recvs[i], &flag, MPI_STATUS_IGNORE);
        *notDone += !flag;
      }
    }
    seconds += MPI_Wtime() - start;
    MPI_Waitall(n, recvs, MPI_STATUSES_IGNORE); /* those a test found incomplete */
  }
  return seconds;
}

/* Rank 0: the seconds of `calls` MPI_Test calls on a receive from rank 1, which sends only when
 * told to, after the tests. *done counts the tests that found it complete (expected 0). */
static double pendingRequest(int rank, long calls, long* done) {
  double value = 0, go = 0;
  if (rank == 1) {
    MPI_Recv(&go, 1, MPI_DOUBLE, 0, kTagGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&value, 1, MPI_DOUBLE, 0, kTagData, MPI_COMM_WORLD);
    return 0;
  }
  MPI_Request req;
  MPI_Irecv(&value, 1, MPI_DOUBLE, 1, kTagData, MPI_COMM_WORLD, &req);
  int flag = 0;
  const double start = MPI_Wtime();
  for (long i = 0; i < calls; ++i) {
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    *done += flag;
  }
  const double seconds = MPI_Wtime() - start;
  MPI_Send(&go, 1, MPI_DOUBLE, 1, kTagGo, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  return seconds;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long calls = 20000, reps = 11;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0) fputs(kUsage, stdout);
      MPI_Finalize();
      return 0;
    }
    const int known = !strcmp(a, "-n") || !strcmp(a, "-r");
    if (!known || i + 1 == argc ||
        !parsePositive(argv[i + 1], !strcmp(a, "-n") ? 100000000 : kMaxReps,
                       !strcmp(a, "-n") ? &calls : &reps)) {
      if (rank == 0)
        fprintf(stderr, "overpass-bench-p2p: %s '%s'\n%s",
                !known         ? "unknown argument"
                : i + 1 < argc ? "not a positive number of calls or repetitions:"
                               : "a number is expected after",
                !known || i + 1 == argc ? a : argv[i + 1], kUsage);
      MPI_Finalize();
      return 2;
    }
    ++i;
  }
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "overpass-bench-p2p: needs 2 ranks, not %d\n%s", size, kUsage);
    MPI_Finalize();
    return 2;
  }

  const char* names[] = {"pingpong", "test-done", "wait-done", "test-pending"};
  const char* units[] = {"ns per round trip", "ns per MPI_Test", "ns per MPI_Wait",
                         "ns per MPI_Test"};
  enum { kCases = 4 };
  double* ns = malloc(sizeof(double) * kCases * (size_t)reps);
  long anomalies[kCases] = {0};
  for (long r = 0; r < reps; ++r) {
    for (int c = 0; c < kCases; ++c) {
      PMPI_Barrier(MPI_COMM_WORLD);
      double seconds = 0;
      switch (c) {
        case 0:
          seconds = pingpong(rank, calls);
          break;
        case 1:
        case 2:
          seconds = completeRequests(calls, c == 2, &anomalies[c]);
          break;
        default:
          seconds = pendingRequest(rank, calls, &anomalies[c]);
          break;
      }
      ns[c * reps + r] = seconds * 1e9 / (double)calls;
    }
  }
  if (rank == 0) {
    const char* preload = getenv("LD_PRELOAD");
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    version[strcspn(version, "\n")] = 0;
    printf("# overpass-bench-p2p: completion calls on point-to-point requests, 2 ranks\n");
    printf("# MPI library : %s\n# LD_PRELOAD  : %s\n", version,
           preload && *preload ? preload : "(none)");
    printf("# rank 0's time per call: median [min, max] of %ld repetitions of %ld calls\n", reps,
           calls);
    printf("# %-14s %10s %10s %10s  %s\n", "case", "median", "min", "max", "unit");
    for (int c = 0; c < kCases; ++c) {
      double* v = ns + c * reps;
      qsort(v, (size_t)reps, sizeof(double), compareDoubles);
      const double median = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
      printf("  %-14s %10.1f %10.1f %10.1f  %s\n", names[c], median, v[0], v[reps - 1], units[c]);
    }
    if (anomalies[1])
      printf(
          "# test-done: %ld tests found the request incomplete (not all timed calls were on "
          "a complete request)\n",
          anomalies[1]);
    if (anomalies[3])
      printf("# test-pending: %ld tests found the request complete\n", anomalies[3]);
  }
  free(ns);
  MPI_Finalize();
  return 0;
}
