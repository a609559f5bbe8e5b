/* One rank stops taking part: it sleeps instead of calling MPI_Allreduce. Under
   OVERPASS_TIMEOUT the others must end with Overpass's report naming the collective and the
   silent rank, instead of hanging. (Without Overpass this program hangs until killed.) */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* everyone takes part */
  if (rank == 1) {
    sleep(30); /* silent: never calls the second collective */
  } else {
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d: the collective returned although rank 1 never called it\n", rank);
  }
  MPI_Finalize();
  return 0;
}
