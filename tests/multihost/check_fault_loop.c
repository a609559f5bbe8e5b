/* Calls one collective again and again for a while, so that a host can fail in the middle of
   it (tests/multihost/check_fault.py takes its link down or kills its ranks).

   check_fault_loop COLLECTIVE BYTES SECONDS
     COLLECTIVE  allreduce, bcast or alltoall (roots are rank 0)
     BYTES       bytes per rank
     SECONDS     how long to go on; then it returns 0 (a fault that went unnoticed)
   Each rank prints "rank R on HOST pid P looping" after its first call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 4 ||
      (strcmp(argv[1], "allreduce") && strcmp(argv[1], "bcast") && strcmp(argv[1], "alltoall"))) {
    fprintf(stderr, "usage: check_fault_loop allreduce|bcast|alltoall BYTES SECONDS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank, size, len;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(host, &len);
  const int count = atoi(argv[2]) / (int)sizeof(int) > 0 ? atoi(argv[2]) / (int)sizeof(int) : 1;
  const double seconds = atof(argv[3]);
  int* send = calloc((size_t)count * size, sizeof(int));
  int* recv = calloc((size_t)count * size, sizeof(int));
  const double start = MPI_Wtime();
  long calls = 0;
  int done = 0;
  while (!done) {
    int rc = MPI_SUCCESS;
    if (!strcmp(argv[1], "allreduce"))
      rc = MPI_Allreduce(send, recv, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(argv[1], "bcast"))
      rc = MPI_Bcast(send, count, MPI_INT, 0, MPI_COMM_WORLD);
    else
      rc = MPI_Alltoall(send, count, MPI_INT, recv, count, MPI_INT, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
      printf("rank %d: %s returned error %d\n", rank, argv[1], rc);
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (calls++ == 0) {
      printf("rank %d on %s pid %ld looping\n", rank, host, (long)getpid());
      fflush(stdout);
    }
    /* Every rank stops after the same call: rank 0's clock decides. */
    int stop = MPI_Wtime() - start > seconds;
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    done = stop;
  }
  if (rank == 0) printf("check_fault_loop: %ld calls, no fault seen\n", calls);
  MPI_Finalize();
  return 0;
}
