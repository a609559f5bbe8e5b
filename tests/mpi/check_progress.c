/* Overpass must leave nothing for later progress: once a collective returns, what it sent reaches
   its peers while this rank waits in calls that Overpass does not see (the MPI library does not
   progress Overpass's own transport).

   One side runs far ahead while the other sleeps, so that the sender's socket fills and its last
   message is only partly written when its call returns (the UCX TCP transport keeps the rest in
   its buffer and completes the send). The runner-ahead then waits in MPI point-to-point calls,
   which Overpass does not intercept, for the peer that still needs that message:

     reduce: the leaves run ahead (4 KiB to root 0), then MPI_Ssend to the root, which sleeps
             first and receives after its last reduce;
     bcast:  root 0 runs ahead (4 KiB), then waits in MPI_Recv for every other rank, which sleeps
             first and sends after its last bcast.

   Every result is checked. Run under OVERPASS_TIMEOUT so that a stall ends with a report. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int value(int rank, int call, int i) {
  return (rank + 1) * 7 + call * 3 + i;
}

static void spin(double seconds) {
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5 || (strcmp(argv[1], "reduce") != 0 && strcmp(argv[1], "bcast") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: check_progress reduce|bcast ROUNDS CALLS BYTES\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int reduce = strcmp(argv[1], "reduce") == 0;
  const int rounds = atoi(argv[2]), calls = atoi(argv[3]);
  const int kInts = atoi(argv[4]) / (int)sizeof(int);
  int* buf = malloc(sizeof(int) * kInts);
  int* out = malloc(sizeof(int) * kInts);
  memset(buf, 0, sizeof(int) * kInts);
  long wrong = 0;
  const int sleeper = reduce ? rank == 0 : rank != 0;
  /* One call first: Overpass starts its engine for the communicator (which all ranks agree on). */
  MPI_Reduce(buf, out, kInts, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  for (int round = 0; round < rounds; ++round) {
    if (sleeper) usleep(50 * 1000); /* the others run ahead meanwhile */
    for (int k = 0; k < calls; ++k) {
      const int c = round * calls + k;
      if (reduce) {
        for (int i = 0; i < kInts; ++i) buf[i] = value(rank, c, i);
        MPI_Reduce(buf, out, kInts, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
          for (int i = 0; i < kInts; ++i) {
            long expect = 0;
            for (int r = 0; r < size; ++r) expect += value(r, c, i);
            wrong += out[i] != (int)expect;
          }
        }
      } else {
        for (int i = 0; i < kInts; ++i) buf[i] = rank == 0 ? value(0, c, i) : -1;
        MPI_Bcast(buf, kInts, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < kInts; ++i) wrong += buf[i] != value(0, c, i);
      }
      if (sleeper) spin(20e-6); /* slower than the sender: its socket stays full */
    }
    /* The runner-ahead now waits in point-to-point calls, which Overpass does not see, for the
       sleeper, which still needs the last call's message. */
    int token = rank;
    if (rank == 0) {
      for (int r = 1; r < size; ++r)
        MPI_Recv(&token, 1, MPI_INT, r, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (reduce) {
      MPI_Ssend(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    } else {
      MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }
  }
  long total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("progress %s: %d rounds of %d calls on %d ranks, %ld wrong values\n", argv[1], rounds,
           calls, size, total);
  free(buf);
  free(out);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
