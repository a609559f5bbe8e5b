// OVERPASS_TIMEOUT: one watchdog thread per process that watches every call Overpass
// intercepts, whichever path serves it (its own algorithms on any transport, the shared-memory
// engine, the MPI library through PMPI), and Overpass's own blocking steps at start-up and
// teardown. A call stamps its thread's slot on entry; the transports and the shared-memory
// channel note progress as their waits complete (common/progress.h); a call whose slot shows no
// progress for the timeout is reported and the job aborted: PMPI_Abort, and _exit after a grace
// period in case the abort itself stalls. The report names the call, the communicator (name,
// size, members), the calling rank, and the ranks behind it: every rank publishes its current
// call and a heartbeat on the host's progress board (shm/progress_board.h), so a waiting rank
// names the rank that never arrived, not the neighbour it waits on. Ranks on other hosts are not
// visible: their own watchdogs report them. Without OVERPASS_TIMEOUT nothing runs and a watched
// call costs one branch.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "common/bootstrap.h"

namespace overpass::shim {

namespace watchdog_detail {
extern std::atomic<bool> gRunning;
struct Slot;
}  // namespace watchdog_detail

// Starts the thread (no-op for timeoutSeconds <= 0). Local: may run before the ranks agreed.
void startWatchdog(double timeoutSeconds, int worldRank);
// Sets up the host's progress board: a collective over `bootstrap` (the world), called by every
// rank once the configuration is agreed, whether or not its watchdog runs (`watching`: the
// agreed timeout is on; otherwise nothing is done).
void attachProgressBoard(bool watching, Bootstrap& bootstrap);
// Stops the thread and unmaps the board (teardown at MPI_Finalize).
void stopWatchdog();

// A call under watch, for the scope of the object. `what`: a Collective, or a BoardRecord
// phase (shm/progress_board.h).
class WatchedCall {
 public:
  WatchedCall(int what, MPI_Comm comm) {
    if (watchdog_detail::gRunning.load(std::memory_order_relaxed)) enter(what, comm);
  }
  ~WatchedCall() {
    if (slot_) leave();
  }
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

  bool active() const { return slot_ != nullptr; }
  // The call's communicator key and number on it, once the communicator's state is known.
  void identify(std::uint64_t commKey, std::uint64_t call);

 private:
  void enter(int what, MPI_Comm comm);
  void leave();
  watchdog_detail::Slot* slot_ = nullptr;
};

// The key of `comm` on the progress board (a hash of its members' world ranks; a local query).
std::uint64_t boardKey(MPI_Comm comm);

}  // namespace overpass::shim
