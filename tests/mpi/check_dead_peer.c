/* A rank dies in the middle of the job (it exits instead of calling the collective). Run under
   `mpirun --enable-recovery`, so that mpirun does not kill the others at once: they must fail
   with an error naming the dead peer instead of hanging. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* everyone takes part */
  if (rank == 1) _exit(3);                                     /* dies without a word */
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d: the collective returned although rank 1 is dead\n", rank);
  MPI_Finalize();
  return 0;
}
