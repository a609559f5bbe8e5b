// The nonblocking collectives Overpass serves itself (docs/ARCHITECTURE.md, "Nonblocking
// collectives").
//
// Each one runs as a fiber (common/fiber.h): its body is the blocking algorithm, and every wait in
// it that finds nothing to do yields (common/progress.h), so the call returns once the algorithm
// first has to wait, and the rest happens whenever a thread advances the process's operations:
// - inside every MPI call that waits or tests (the MPI library's own progress loop calls
//   Overpass's callback, registered with opal_progress_register, which does nothing inside a
//   fiber or where another thread runs the engine), so a rank blocked in MPI_Recv still serves
//   its peers; MPI_Wait and MPI_Waitall poll Overpass's operations in a loop of their own;
// - inside Overpass's own waits (the idle hook of common/progress.h), blocking collectives on
//   other communicators included;
// - at the next nonblocking call.
// The application holds a real MPI request, a generalized request (MPI_Grequest_start) that the
// engine completes when the fiber ends: every completion function, in C, Fortran and Python,
// works on it as on any request, mixed with the program's own. Operations on one communicator run
// one after another, in the order they were started, as the standard matches them on every rank;
// a blocking collective Overpass serves on the communicator first completes them (drain()).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace overpass::shim {

struct CommState;
struct Call;

// An operation that may be served together with the ones queued right after it (OVERPASS_FUSION,
// shim/dispatch.cc): those with an equal key, in order, each with its bytes, input and output.
struct FusionPart {
  std::uint64_t key = 0;
  std::size_t bytes = 0;
  const void* in = nullptr;
  void* out = nullptr;
};

// Whether Overpass can serve nonblocking collectives: the MPI library's progress loop calls it
// (set up by startNonblocking at initialisation). Where it cannot, they go to the MPI library.
bool nonblockingReady();

// Hooks into the MPI library's progress loop and Overpass's idle waits, and with `thread` starts
// the progress thread (OVERPASS_PROGRESS=thread); `oversubscribed`: this rank's ranks outnumber
// its cores. At initialisation.
void startNonblockingEngine(bool thread, bool oversubscribed);
// Completes every outstanding operation and unhooks. At finalize, while collectives still work.
void stopNonblockingEngine();

// Starts `body` (which returns its MPI error code), the nonblocking collective `call`, on
// `state`'s communicator after those already started on it; *call.request becomes its generalized
// request. An MPI error code (the operation is not started where it is not MPI_SUCCESS).
// `deviceContext` (DeviceMemory::context() at the call; null: none) is made current on whichever
// thread runs the operation, for as long as it runs there.
int startOperation(CommState& state, const Call& call, std::function<int()> body,
                   std::optional<FusionPart> part = std::nullopt, void* deviceContext = nullptr);

// Inside an operation's body: the fusable parts queued right after it on `state`, with its key,
// as long as their bytes with `bytes` fit in `limit` (local: the ranks agree on how many to take).
std::vector<FusionPart> partsBehind(CommState& state, const FusionPart& mine, std::size_t limit);
// Inside an operation's body: the next `n` operations on `state` were served by it, with `rc`;
// they complete right after it.
void absorb(CommState& state, std::size_t n, int rc);

// MPI_Request_free (C and Fortran): erroneous on the request of a nonblocking collective (MPI
// 3.1, 5.12), refused with MPI_ERR_REQUEST through MPI_COMM_WORLD's error handler, as the MPI
// library refuses its own; any other request goes to the MPI library.
int onRequestFree(MPI_Request* request);

// MPI_Wait and MPI_Waitall (C): where Overpass's operations are among the requests, they are
// advanced first in a loop of Overpass's own (awaitOperations), which polls them as its blocking
// collectives poll; then the MPI library completes every request as usual. Where none is (one
// relaxed load when no operation is live), straight to the MPI library.
int onWait(MPI_Request* request, MPI_Status* status);
int onWaitall(int count, MPI_Request requests[], MPI_Status statuses[]);

// Completes every operation outstanding on `state` (before a blocking collective of Overpass on
// the same communicator, and before its state is released).
void drain(CommState& state);

// Advances every outstanding operation once; returns how many completed. Safe from any thread
// and inside itself (where it does nothing).
int progressOperations();

}  // namespace overpass::shim
