/* One rank stops taking part in a collective. Under OVERPASS_TIMEOUT the others must end the job
   with Overpass's report (the collective, the communicator, the silent rank) instead of hanging.
   Without Overpass this program hangs until killed.

   check_timeout COLLECTIVE BYTES MODE [COMM]
     COLLECTIVE  allreduce, bcast, reduce, allgather, alltoall, gather, scatter, barrier,
                 reduce_scatter_block, iallreduce (MPI_Iallreduce then MPI_Wait)
     BYTES       bytes per rank (per block for the block collectives)
     MODE        skip: the last rank sleeps instead of calling the second collective;
                 stop: it stops itself (SIGSTOP) before the second collective;
                 first: it sleeps instead of the first (the others wait in the set-up of
                 Overpass's state for the communicator);
                 finalize: every call completes, it sleeps instead of MPI_Finalize (with
                 OVERPASS_STATS, the others wait in Overpass's teardown)
     COMM        world (default), or dup: a duplicate named "check_timeout_dup"
   Except in mode first, every rank first completes one call of the collective; roots are
   rank 0. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int call(const char* coll, int* send, int* recv, int count, MPI_Comm comm) {
  if (!strcmp(coll, "allreduce")) return MPI_Allreduce(send, recv, count, MPI_INT, MPI_SUM, comm);
  if (!strcmp(coll, "bcast")) return MPI_Bcast(send, count, MPI_INT, 0, comm);
  if (!strcmp(coll, "reduce")) return MPI_Reduce(send, recv, count, MPI_INT, MPI_SUM, 0, comm);
  if (!strcmp(coll, "allgather"))
    return MPI_Allgather(send, count, MPI_INT, recv, count, MPI_INT, comm);
  if (!strcmp(coll, "alltoall"))
    return MPI_Alltoall(send, count, MPI_INT, recv, count, MPI_INT, comm);
  if (!strcmp(coll, "gather"))
    return MPI_Gather(send, count, MPI_INT, recv, count, MPI_INT, 0, comm);
  if (!strcmp(coll, "scatter"))
    return MPI_Scatter(send, count, MPI_INT, recv, count, MPI_INT, 0, comm);
  if (!strcmp(coll, "barrier")) return MPI_Barrier(comm);
  if (!strcmp(coll, "iallreduce")) { /* the wait is watched: the post returns at once */
    MPI_Request request;
    MPI_Iallreduce(send, recv, count, MPI_INT, MPI_SUM, comm, &request);
    return MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  if (!strcmp(coll, "reduce_scatter_block"))
    return MPI_Reduce_scatter_block(send, recv, count, MPI_INT, MPI_SUM, comm);
  fprintf(stderr, "check_timeout: unknown collective '%s'\n", coll);
  MPI_Abort(MPI_COMM_WORLD, 2);
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 3 ? argv[3] : "";
  if (strcmp(mode, "skip") && strcmp(mode, "stop") && strcmp(mode, "first") &&
      strcmp(mode, "finalize")) {
    fprintf(stderr, "usage: check_timeout COLLECTIVE BYTES skip|stop|first|finalize [world|dup]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (argc > 4 && !strcmp(argv[4], "dup")) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_name(comm, "check_timeout_dup");
  }
  const int count = atoi(argv[2]) / (int)sizeof(int) > 0 ? atoi(argv[2]) / (int)sizeof(int) : 1;
  int* send = calloc((size_t)count * size, sizeof(int));
  int* recv = calloc((size_t)count * size, sizeof(int));
  const int silent = rank == size - 1;
  if (!strcmp(mode, "finalize")) {
    call(argv[1], send, recv, count, comm);
    call("barrier", send, recv, count, comm);
    if (silent) {
      printf("rank %d pid %ld goes silent\n", rank, (long)getpid());
      fflush(stdout);
      sleep(60);
      return 1;
    }
    MPI_Finalize();
    printf("rank %d: MPI_Finalize returned although rank %d went silent\n", rank, size - 1);
    return 0;
  }
  if (strcmp(mode, "first") || !silent) call(argv[1], send, recv, count, comm);
  if (silent) {
    printf("rank %d pid %ld goes silent\n", rank, (long)getpid());
    fflush(stdout);
    if (!strcmp(mode, "stop")) raise(SIGSTOP);
    sleep(60); /* mpirun continues a stopped rank before it kills it */
    return 1;
  } else {
    if (strcmp(mode, "first")) call(argv[1], send, recv, count, comm);
    /* Roots of rooted collectives may return: they wait in the next call instead. */
    call(argv[1], send, recv, count, comm);
    call("barrier", send, recv, count, comm);
  }
  printf("rank %d: returned although rank %d went silent\n", rank, size - 1);
  MPI_Finalize();
  return 0;
}
