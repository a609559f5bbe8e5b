/* Prints, for every rank, which ranks share its node according to the MPI library itself
   (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), for check_topology.py to compare with the
   topology Overpass dumped. Also runs one collective per communicator shape so that Overpass
   derives their topologies. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, leader;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  int sharedSize;
  MPI_Comm_size(shared, &sharedSize);
  leader = rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, shared); /* the lowest world rank of the real node */
  int sum = 0, one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d real_node_leader %d real_node_size %d world %d\n", rank, leader, sharedSize,
         sum);
  MPI_Comm_free(&shared);
  MPI_Finalize();
  return sum == size ? 0 : 1;
}
