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
#include "gpu/memory.h"
#include "shim/comm_state.h"
#include "shim/device_staging.h"
#include "shim/runtime.h"

namespace overpass::shim {

// A call's size as the statistics count it (docs/STATS.md, the nccl-tests convention): the whole
// buffer of p blocks for the block collectives, the vector for the others.
inline std::uint64_t statisticsBytes(const CallShape& s) {
  switch (s.coll) {
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kAllgather:
    case Collective::kAlltoall:
    case Collective::kReduceScatterBlock:
      return static_cast<std::uint64_t>(s.bytes) * static_cast<std::uint64_t>(s.teamSize);
    default:
      return s.bytes;
  }
}

// Raises `code` through the error handler of `comm`, as the MPI library would.
int raiseError(MPI_Comm comm, int code);

// A call, as dispatch sees it. Each collective implements:
//   bool valid() const;                              // step 2
//   CallShape shape() const;                         // for selection and statistics
//   std::optional<FallbackReason> check(CommState&); // step 4
//   void buffers(int rank, int size, Add add);       // its significant buffers on this rank:
//       add(pointer member, count, datatype, read, written), for device staging
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
  CallShape shape;
  if (sized) shape = call.shape();
  shape.coll = coll;
  shape.teamSize = size;
  shape.ordered = shape.ordered && rt.config.deterministic;
  shape.shmBuffer =
      state && state->shm && state->topology.singleNode() ? state->shm->bufferBytes() : 0;
  if (state && !state->inter) {
    shape.nodes = state->topology.nodeCount();
    shape.perNode = state->topology.balanced() ? state->topology.maxRanksPerNode() : 0;
  }
  const Algorithm* algorithm = nullptr;
  if (!reason) {
    algorithm = &state->selections.get(shape, [&](const CallShape& s) -> const Algorithm& {
      const Selection chosen = rt.selector.select(s);
      if (chosen.skipped)
        OVERPASS_DEBUG("%s of %zu bytes on %d ranks: rule '%s' skipped, %s cannot serve it%s",
                       collectiveName(coll).data(), s.bytes, s.teamSize,
                       chosen.skipped->text.c_str(), chosen.skipped->algorithm->name.data(),
                       s.ordered ? " in deterministic mode" : "");
      return *chosen.algorithm;
    });
    if (algorithm->isPmpi()) reason = FallbackReason::kSelected;
  }
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  // Device buffers become host copies for whichever path runs (shim/device_staging.h).
  std::optional<DeviceStaging> staging;
  if (DeviceMemory* device = state && !state->inter && reason != FallbackReason::kInvalidArgument
                                 ? deviceMemory()
                                 : nullptr) {
    staging.emplace(*device, state->deviceStaging);
    int staged = MPI_SUCCESS;
    call.buffers(state->transport->rank(), size,
                 [&](auto& buf, std::size_t count, MPI_Datatype type, bool read, bool written) {
                   if (staged == MPI_SUCCESS)
                     staged = staging->add(buf, count, type, read, written);
                 });
    if (staged != MPI_SUCCESS) return raiseError(comm, staged);
  }
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
  if (staging && rc == MPI_SUCCESS) {
    rc = staging->finish();
    if (rc != MPI_SUCCESS) rc = raiseError(comm, rc);
  }
  if (timed) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    rt.stats.record(coll, statisticsBytes(shape), algorithmId(*algorithm),
                    static_cast<std::uint64_t>(ns));
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
