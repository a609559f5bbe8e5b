#include "shim/hello.h"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common/log.h"
#include "shim/world_ranks.h"

namespace overpass::shim {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kHello = 0x4f5650;  // "OVP": this rank runs Overpass

// A tag no application is likely to use: just below the upper bound MPI guarantees for
// MPI_COMM_WORLD.
int helloTag() {
  int* ub = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
  return found && ub ? *ub - 7 : 32760;
}

// Completes the requests or gives up at `deadline`; true when all completed. Yields at once and
// sleeps after the first millisecond: ranks may outnumber cores.
bool waitUntil(std::vector<MPI_Request>& requests, Clock::time_point deadline) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    int done = 0;
    PMPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    if (now - start < std::chrono::milliseconds(1))
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

void cancelAll(std::vector<MPI_Request>& requests) {
  for (MPI_Request& r : requests)
    if (r != MPI_REQUEST_NULL) PMPI_Cancel(&r);
}

[[noreturn]] void stop() {
  PMPI_Abort(MPI_COMM_WORLD, 1);
  _exit(1);
}

}  // namespace

void checkEveryRankRunsOverpass(double deadlineSeconds) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return;
  const int tag = helloTag();
  const auto patience =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadlineSeconds));
  if (rank == 0) {
    std::vector<int> hellos(size, 0);
    std::vector<MPI_Request> requests(size - 1);
    for (int r = 1; r < size; ++r)
      PMPI_Irecv(&hellos[r], 1, MPI_INT, r, tag, MPI_COMM_WORLD, &requests[r - 1]);
    const bool all = waitUntil(requests, Clock::now() + patience);
    std::vector<int> missing;
    for (int r = 1; r < size; ++r)
      if (hellos[r] != kHello) missing.push_back(r);
    int answer = static_cast<int>(missing.size());
    for (int r = 1; r < size; ++r)
      if (hellos[r] == kHello) PMPI_Send(&answer, 1, MPI_INT, r, tag, MPI_COMM_WORLD);
    if (all && missing.empty()) return;
    cancelAll(requests);
    OVERPASS_ERROR(
        "world rank%s %s did not answer Overpass's start-up hello within %g s: %s without "
        "liboverpass.so (LD_PRELOAD not passed to every rank, or an MPI_COMM_WORLD shared with "
        "another program), or %s stopped. Every rank must run Overpass; stopping the job",
        missing.size() > 1 ? "s" : "", rankRanges(missing).c_str(), deadlineSeconds,
        missing.size() > 1 ? "they run" : "it runs", missing.size() > 1 ? "are" : "is");
    stop();
  }
  int hello = kHello, answer = -1;
  std::vector<MPI_Request> requests(2);
  PMPI_Isend(&hello, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &requests[0]);
  PMPI_Irecv(&answer, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &requests[1]);
  if (waitUntil(requests, Clock::now() + 2 * patience)) {
    if (answer == 0) return;
    // Rank 0 names the missing ranks and aborts the job; should that stall, so do we.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    stop();
  }
  cancelAll(requests);
  OVERPASS_ERROR(
      "world rank 0 did not answer Overpass's start-up hello within %g s: it runs without "
      "liboverpass.so (LD_PRELOAD not passed to every rank, or an MPI_COMM_WORLD shared with "
      "another program), or is stopped. Every rank must run Overpass; stopping the job",
      2 * deadlineSeconds);
  stop();
}

}  // namespace overpass::shim
