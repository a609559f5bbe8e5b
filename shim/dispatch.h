// Dispatch: the one place that decides, for every intercepted call, between an Overpass
// algorithm and the MPI library (PMPI), and records what happened.
//
// Order of the decision, each step on facts every rank of the communicator shares:
//   1. global reasons (not initialised, disabled, excluded by OVERPASS_COLLS, re-entry);
//   2. arguments the MPI library must reject (null communicator, negative count, ...);
//   3. the communicator's state, created at the first call on it (intercommunicators fall back);
//   4. the call's own reasons (operation and datatype of reductions);
//   5. the selector, which may itself choose the MPI library.
// A rank-local fact (a non-contiguous datatype on one rank) is handled locally by staging and
// never changes the path.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>

#include "coll/registry.h"
#include "coll/selector.h"
#include "common/log.h"
#include "shim/comm_state.h"
#include "shim/runtime.h"

namespace overpass::shim {

// Raises `code` through the error handler of `comm`, as the MPI library would.
int raiseError(MPI_Comm comm, int code);

// A call, as dispatch sees it. Each collective implements:
//   bool valid() const;                              // step 2
//   std::uint64_t bytes(int commSize) const;         // size for statistics and selection
//   std::optional<FallbackReason> check(CommState&); // step 4
//   int pmpi() const;                                // the MPI library's collective
//   int run(CommState&, const Algorithm&);           // an Overpass algorithm; MPI error code
template <class Call>
int dispatchUnguarded(Collective coll, MPI_Comm comm, Call& call) {
  Runtime& rt = runtime();
  std::optional<FallbackReason> reason = globalFallback(coll);
  if (reason && (*reason == FallbackReason::kNotInitialized || *reason == FallbackReason::kReentry))
    return call.pmpi();  // nothing to record: statistics need a running Overpass
  if (!reason && (comm == MPI_COMM_NULL || !call.valid()))
    reason = FallbackReason::kInvalidArgument;
  CommState* state = nullptr;
  if (!reason) {
    ReentryGuard guard;
    int rc = MPI_SUCCESS;
    state = commState(comm, &rc);
    if (!state) return raiseError(comm, rc);
    if (state->inter) reason = FallbackReason::kIntercommunicator;
  }
  if (!reason) reason = call.check(*state);
  const bool timed = rt.config.statsMode != StatsMode::kOff;
  int size = 0;
  if (state && state->transport)
    size = state->transport->size();
  else if (timed && reason != FallbackReason::kInvalidArgument)
    PMPI_Comm_size(comm, &size);
  const bool sized = (timed || !reason) && reason != FallbackReason::kInvalidArgument;
  const std::uint64_t bytes = sized ? call.bytes(size) : 0;
  const Algorithm* algorithm = nullptr;
  if (!reason) {
    algorithm = &selectAlgorithm({coll, bytes, size}, rt.config);
    if (algorithm->isPmpi()) reason = FallbackReason::kSelected;
  }
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  int rc;
  if (reason) {
    OVERPASS_DEBUG("%s: MPI library (%s)", collectiveName(coll).data(),
                   fallbackReasonName(*reason).data());
    rc = call.pmpi();
    algorithm = &pmpiAlgorithm(coll);
    if (timed) rt.stats.recordFallback(coll, *reason);
  } else {
    OVERPASS_TRACE("%s: %s", collectiveName(coll).data(), algorithm->name.data());
    ReentryGuard guard;
    rc = call.run(*state, *algorithm);
    if (rc != MPI_SUCCESS) rc = raiseError(comm, rc);
  }
  if (timed) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    rt.stats.record(coll, bytes, algorithmId(*algorithm), static_cast<std::uint64_t>(ns));
  }
  return rc;
}

// Exceptions never cross the C ABI: an allocation failure becomes MPI_ERR_NO_MEM, raised through
// the communicator's error handler like any MPI error.
template <class Call>
int dispatch(Collective coll, MPI_Comm comm, Call& call) {
  try {
    return dispatchUnguarded(coll, comm, call);
  } catch (const std::bad_alloc&) {
    OVERPASS_ERROR("%s: out of memory", collectiveName(coll).data());
    return raiseError(comm, MPI_ERR_NO_MEM);
  } catch (const std::exception& e) {
    OVERPASS_ERROR("%s: internal error: %s", collectiveName(coll).data(), e.what());
    return raiseError(comm, MPI_ERR_INTERN);
  }
}

}  // namespace overpass::shim
