// Dispatch: the one place that decides, for every intercepted call, between an Overpass
// algorithm and the MPI library (PMPI), and records what happened.
//
// Order of the decision, each step on facts every rank of the communicator shares:
//   1. global reasons (not initialised, disabled, excluded by OVERPASS_COLLS, re-entry);
//   2. arguments the MPI library must reject (null communicator, negative count, ...);
//   3. the communicator's state, created at the first call on it (intercommunicators fall back);
//      its engine, built when the warm-up ends (until then, every call goes to the MPI library);
//   4. the call's own reasons (operation and datatype of reductions);
//   5. the selector, which may itself choose the MPI library.
// A rank-local fact (a non-contiguous datatype on one rank) is handled locally by staging and
// never changes the path.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>

#include "coll/registry.h"
#include "coll/selector.h"
#include "common/log.h"
#include "gpu/memory.h"
#include "gpu/staging_pipeline.h"
#include "shim/comm_state.h"
#include "shim/device_staging.h"
#include "shim/runtime.h"
#include "shim/watchdog.h"

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

// The algorithm for `shape` on the communicator, memoised (the selector's decision, with the
// rules it skipped logged at debug).
inline const Algorithm& selectAlgorithm(CommState& state, const CallShape& shape) {
  return state.engine->selections.get(shape, [&](const CallShape& s) -> const Algorithm& {
    const Selection chosen = runtime().selector.select(s);
    if (chosen.skipped)
      OVERPASS_DEBUG("%s of %zu bytes on %d ranks: rule '%s' skipped, %s cannot serve it%s",
                     collectiveName(s.coll).data(), s.bytes, s.teamSize,
                     chosen.skipped->text.c_str(), chosen.skipped->algorithm->name.data(),
                     s.ordered ? " in deterministic mode" : "");
    return *chosen.algorithm;
  });
}

// Calls that a device algorithm can serve (coll/device_ipc.h) offer
//   CollArgs deviceArgs() const;  // the call on the application's own buffers (none where its
//                                 // datatypes need packing)
template <class Call>
concept DeviceCall = requires(const Call c) {
  { c.deviceArgs() } -> std::same_as<CollArgs>;
};

// Runs a device algorithm; *declined where the ranks agreed that it cannot serve the call (then
// nothing was done). An MPI error code.
int runDeviceAlgorithm(CommState& state, const Algorithm& algorithm, const CollArgs& args,
                       DeviceMemory* device, bool* declined);

// Reductions that can run chunk by chunk (docs/GPU.md): the calls that offer
//   bool chunkable() const;                           // this call's type and operation allow it
//   std::size_t elementBytes() const;
//   std::pair<const void*, void*> pipelineBuffers(int rank) const;  // input, output (or null)
//   Call slice(const void* in, void* out, std::size_t count) const; // the call on one chunk
template <class Call>
concept Chunkable = requires(const Call c) {
  { c.chunkable() } -> std::same_as<bool>;
};

// Whether some rank passes device memory to this chunkable call: agreed with one small
// allreduce on the private communicator (a few microseconds, against the milliseconds of the
// reductions that ask), so that all ranks go chunk by chunk or none does, and host-only calls on
// a device-capable communicator keep their whole-call algorithm.
// `*mineToo`: whether this rank's do.
template <class Call>
bool anyRankHasDeviceBuffers(CommState& state, const Call& call, bool* mineToo) {
  int mine = 0, any = 0;
  if (DeviceMemory* device = deviceMemory()) {
    const auto [in, out] = call.pipelineBuffers(state.rank);
    mine = (in && !device->classify(in).hostAccessible()) ||
           (out && !device->classify(out).hostAccessible());
  }
  ReentryGuard guard;
  PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, state.engine->dup);
  *mineToo = mine != 0;
  return any != 0;
}

// Every rank of a device-capable communicator runs a large reduction as the same sequence of
// chunk collectives; each rank moves its own chunks through host memory with the staging
// pipeline (copies of neighbouring chunks overlap the chunk's collective). Each chunk runs the
// algorithm chosen for the whole call (`*used` on entry, the MPI library included) where it can
// serve the chunk, else the one chosen for the chunk; `*used` ends as the last chunk's.
template <class Call>
int runChunked(CommState& state, const Call& call, const CallShape& shape, const Algorithm** used) {
  const Algorithm& whole = **used;
  const Config& config = runtime().config;
  DeviceMemory* device = deviceMemory();
  DeviceMemory& memory = device ? *device : hostMemory();
  const std::size_t e = call.elementBytes();
  const PipelinePlan plan{shape.bytes, std::max(e, config.gpuChunk / e * e), config.gpuDepth};
  auto* staging =
      static_cast<unsigned char*>(state.deviceStaging.get(0, pipelineStagingBytes(plan), memory));
  if (!staging) return MPI_ERR_NO_MEM;
  const auto [in, out] = call.pipelineBuffers(state.rank);
  OVERPASS_TRACE("%s: %zu bytes in chunks of %zu through the staging pipeline",
                 collectiveName(shape.coll).data(), shape.bytes, plan.chunk);
  int rc = MPI_SUCCESS;
  const Status status =
      runPipelined(memory, in, out, plan, staging,
                   [&](std::size_t, std::size_t bytes, const void* hostIn, void* hostOut) {
                     Call chunk = call.slice(hostIn, hostOut, bytes / e);
                     CallShape chunkShape = shape;
                     chunkShape.bytes = bytes;
                     chunkShape.count = bytes / e;
                     const Algorithm& algorithm =
                         whole.canServe(chunkShape) ? whole : selectAlgorithm(state, chunkShape);
                     *used = &algorithm;
                     ReentryGuard guard;
                     rc = algorithm.isPmpi() ? chunk.pmpi() : chunk.run(state, algorithm);
                     return rc == MPI_SUCCESS ? Status::kOk : Status::kInternal;
                   });
  return rc != MPI_SUCCESS ? rc : status == Status::kOk ? MPI_SUCCESS : MPI_ERR_OTHER;
}

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
  WatchedCall watch(static_cast<int>(coll), comm);  // OVERPASS_TIMEOUT, whichever path runs
  if (!reason && (comm == MPI_COMM_NULL || !call.valid()))
    reason = FallbackReason::kInvalidArgument;
  CommState* state = nullptr;
  if (!reason) {
    ReentryGuard guard;
    int rc = MPI_SUCCESS;
    state = commState(comm, &rc);  // the light record: no communication
    if (!state) return raiseError(comm, rc);
    ++state->calls;
    if (state->inter) reason = FallbackReason::kIntercommunicator;
    if (watch.active() && !state->inter) {
      if (!state->boardKey) state->boardKey = boardKey(comm);
      watch.identify(state->boardKey, state->calls);
    }
  }
  if (!reason) reason = call.check(*state);
  const bool timed = rt.config.statsMode != StatsMode::kOff;
  int size = 0;
  if (state)
    size = state->size;
  else if (timed && reason != FallbackReason::kInvalidArgument)
    PMPI_Comm_size(comm, &size);
  const bool sized = (timed || !reason) && reason != FallbackReason::kInvalidArgument;
  CallShape shape;
  if (sized) shape = call.shape();
  shape.coll = coll;
  shape.teamSize = size;
  shape.ordered = shape.ordered && rt.config.deterministic;
  if (!reason && !state->engine) {
    if (!endsWarmUp(comm, *state, shape)) {
      reason = FallbackReason::kWarmingUp;
    } else {
      ReentryGuard guard;
      if (const int rc = startEngine(comm, *state); rc != MPI_SUCCESS) return raiseError(comm, rc);
    }
  }
  const CommEngine* engine = state ? state->engine.get() : nullptr;
  shape.shmBuffer =
      engine && engine->shm && engine->topology.singleNode() ? engine->shm->bufferBytes() : 0;
  if (engine) {
    shape.nodes = engine->topology.nodeCount();
    shape.maxPerNode = engine->topology.maxRanksPerNode();
  }
  const Algorithm* algorithm = nullptr;
  if (!reason) {
    algorithm = &selectAlgorithm(*state, shape);
    if (algorithm->isPmpi()) reason = FallbackReason::kSelected;
  }
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  auto record = [&] {
    if (!timed) return;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    rt.stats.record(coll, statisticsBytes(shape), algorithmId(*algorithm),
                    static_cast<std::uint64_t>(ns));
  };
  // Every rank of a one-node communicator where device buffers can occur asks whether all its
  // buffers are on devices: the ranks agree through the node's shared memory (a round of flags).
  if constexpr (DeviceCall<Call>) {
    if ((!reason || *reason == FallbackReason::kSelected) && shape.shmBuffer && shape.bytes &&
        engine->deviceCapable && rt.config.gpuIpc) {
      const Algorithm& ipc = *deviceAlgorithm(coll);
      bool declined = false;
      int rc;
      {
        ReentryGuard guard;
        rc = runDeviceAlgorithm(*state, ipc, call.deviceArgs(), deviceMemory(), &declined);
      }
      if (!declined) {
        algorithm = &ipc;
        if (rc != MPI_SUCCESS) rc = raiseError(comm, rc);
        if (timed) rt.stats.recordDevice(coll);
        record();
        return rc;
      }
    }
  }
  if constexpr (Chunkable<Call>) {
    bool mine = false;
    if ((!reason || *reason == FallbackReason::kSelected) && engine->deviceCapable &&
        rt.config.gpuChunk && call.chunkable() && shape.bytes >= 2 * rt.config.gpuChunk &&
        anyRankHasDeviceBuffers(*state, call, &mine)) {
      int rc = runChunked(*state, call, shape, &algorithm);
      if (rc != MPI_SUCCESS) rc = raiseError(comm, rc);
      if (timed && mine) rt.stats.recordDevice(coll);
      record();
      return rc;
    }
  }
  // Device buffers become host copies for whichever path runs (shim/device_staging.h).
  std::optional<DeviceStaging> staging;
  if (DeviceMemory* device = state && !state->inter && reason != FallbackReason::kInvalidArgument
                                 ? deviceMemory()
                                 : nullptr) {
    staging.emplace(*device, state->deviceStaging);
    int staged = MPI_SUCCESS;
    call.buffers(state->rank, size,
                 [&](auto& buf, std::size_t count, MPI_Datatype type, bool read, bool written) {
                   if (staged == MPI_SUCCESS)
                     staged = staging->add(buf, count, type, read, written);
                 });
    if (staged != MPI_SUCCESS) return raiseError(comm, staged);
    if (timed && staging->any()) rt.stats.recordDevice(coll);
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
  record();
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
