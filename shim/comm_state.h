// Per-communicator state, in two parts (docs/ARCHITECTURE.md, "Per communicator"):
// - CommState, the communicator's own record: created at the first intercepted call without any
//   communication, cached on an MPI attribute, released by the attribute's delete callback;
// - CommEngine, what Overpass's algorithms need (a private duplicate, the transport over it, the
//   node's shared memory, scratch memory): built when the communicator's warm-up ends, at the
//   same call on every rank, and handed back to a pool at MPI_Comm_free, from which a later
//   communicator over the same ranks in the same order takes it again once every rank agrees that
//   it is free everywhere.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "coll/select/race.h"
#include "coll/select/selector.h"
#include "coll/team.h"
#include "gpu/memory.h"
#include "shim/pmpi_transport.h"
#include "shim/staged_buffer.h"
#include "shm/arena.h"
#include "shm/channel.h"
#include "topo/topology.h"

namespace overpass::shim {

struct Operation;

struct CommEngine {
  std::vector<int> members;  // the world ranks of the communicator, in its rank order: pool key
  MPI_Comm dup = MPI_COMM_NULL;
  std::unique_ptr<Transport> transport;  // PmpiTransport over `dup`, UcxTransport, or a
                                         // SplitTransport of both (OVERPASS_TRANSPORT=auto)
  std::uint32_t ucxCommId = 0;           // the communicator's id in UCX tags (0: not UCX)
  Topology topology;  // derived from the job's topology by rank translation, no communication
  Scratch scratch;    // for the algorithms
  Staging staging;    // for the shim: packing of non-contiguous data, in-place copies
  DeviceScratch deviceScratch;  // device memory of the device algorithms (coll/device/device_ipc.h)
  bool deviceCapable = false;   // some rank may pass device buffers: agreed at creation
  const Selector* selector = nullptr;  // the runtime's, for the steps of hierarchical algorithms
  SelectionCache selections;           // memoised selector decisions
  RaceBook races;                      // the races its blocking calls run (coll/select/race.h)
  std::unique_ptr<ShmArena> arena;     // this rank's node's shared memory (shim/comm_state.cc)
  std::unique_ptr<ShmChannel> shm;     // this rank's end of it, among the node's ranks (or null)
  std::size_t streamAbove = SIZE_MAX;  // Team::streamAbove: the node ranks' share of the L3
  std::size_t nodeShmBuffer = 0;       // Team::nodeShmBuffer: agreed in setUpShm

  // The team's channel spans the team only when the communicator is one node; the node channel
  // serves the node steps of hierarchical algorithms.
  Team team() {
    Team team{*transport, scratch,   topology.singleNode() ? shm.get() : nullptr,
              &topology,  shm.get(), streamAbove,
              selector};
    team.nodeShmBuffer = nodeShmBuffer;
    return team;
  }
};

struct CommState {
  bool inter = false;     // intercommunicator: never handled, no resources
  bool released = false;  // MPI resources freed at finalize; the object lives on until deleted
  int rank = 0, size = 0;
  std::uint64_t calls = 0;     // intercepted calls on this communicator that reached this state
  std::uint64_t boardKey = 0;  // its key on the progress board (shim/watchdog.h), or 0
  HostStaging deviceStaging;   // host copies of device buffers (shim/device_staging.h)
  // Null during the warm-up (every call goes to the MPI library), then this communicator's engine.
  std::unique_ptr<CommEngine> engine;
  int slot = -1;  // the engine's slot in its pool (-1: not pooled, destroyed at release)
  // Nonblocking collectives started on it and not yet complete, in order (shim/nonblocking.h;
  // `pending` under the engine's lock).
  std::deque<Operation*> pending;
  std::atomic<int> outstanding{0};

  Team team() { return engine->team(); }
};

// The state of `comm`, created if needed without communication. Returns nullptr and sets *error
// if creation failed.
CommState* commState(MPI_Comm comm, int* error);

// Grows whenever a communicator's state is deleted or released: a state found before is still the
// state of its communicator's handle while the epoch has not changed (a freed communicator's handle
// may come back for a new one). Also where what a state's calls were decided on changed
// (commStateChanged: the cores' distance of a two-rank team, shm/core_distance.h).
std::uint64_t commStateEpoch();
void commStateChanged();

// A call at least this large (one rank's bytes) ends the warm-up at once: Overpass's algorithms
// save more on it than the set-up costs (docs/PERFORMANCE.md, "Communicator set-up").
inline constexpr std::size_t kWarmUpEndBytes = std::size_t{64} << 10;

// Whether the `calls`-th call on a communicator without an engine, of `shape`, ends its warm-up:
// a decision on facts every rank shares (docs/ARCHITECTURE.md). No warm-up on MPI_COMM_WORLD
// (`world`), nor with `warmUp` 0; past `warmUp` calls, on a call of kWarmUpEndBytes or more, or on
// an order-sensitive reduction in deterministic mode (the MPI library's order is not rank order).
inline bool warmUpEnds(bool world, unsigned warmUp, std::uint64_t calls, const CallShape& shape) {
  return world || calls > warmUp || shape.ordered || shape.bytes >= kWarmUpEndBytes;
}
bool endsWarmUp(MPI_Comm comm, const CommState& state, const CallShape& shape);

// The pool agreement's outcome, from the slot bits ANDed over the ranks: slots free (holding the
// engine) on every rank, empty on every rank, idle (free or empty) on every rank. A slot free
// everywhere is reused, else one empty everywhere gets a new engine, else none (-1: a new engine
// outside the pool); slots idle everywhere but free on some ranks only are `stale`: the ranks
// that hold their engine destroy it, so that the slot is empty everywhere again.
struct SlotChoice {
  int slot = -1;
  bool reuse = false;
  std::uint64_t stale = 0;
};
SlotChoice chooseSlot(std::uint64_t freeAll, std::uint64_t emptyAll, std::uint64_t idleAll);

// Gives `state` its engine: a free one of the pool where every rank of `comm` has the same one
// free, else a new one. Collective over `comm`: every rank must call it at the same call. An MPI
// error code.
int startEngine(MPI_Comm comm, CommState& state);

// Creates the attribute keyval; at finalize, frees the MPI resources of every live state.
int initCommStates();
void releaseCommStates();

}  // namespace overpass::shim
