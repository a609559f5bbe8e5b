/* The node shared-memory engine leaves nothing behind: its segment's name is removed as soon as
 * every rank has mapped it, so while the job runs no name of it exists (checked here by rank 0,
 * after the first collective created the engine), and none can remain however the job ends.
 * argv[1]: "normal" (finalize), "abort" (rank 1 calls MPI_Abort) or "kill" (rank 1 kills
 * itself with SIGKILL). Prints rank 0's pid, which names the segments, for the test runner to
 * look for leftovers afterwards. */
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int named_segments(void) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "overpass-%ld-", (long)getpid());
  DIR* dir = opendir("/dev/shm");
  if (!dir) return 0;
  int n = 0;
  for (struct dirent* e; (e = readdir(dir));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(dir);
  return n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "normal";
  double x = rank + 1, sum = 0;
  MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm half; /* a second communicator, a second segment */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Barrier(half);
  if (rank == 0) {
    printf("rank 0 pid %ld; segments named while running: %d; sum %s\n", (long)getpid(),
           named_segments(), sum == size * (size + 1) / 2.0 ? "right" : "WRONG");
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1 && strcmp(mode, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 3);
  if (rank == 1 && strcmp(mode, "kill") == 0) raise(SIGKILL);
  MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
