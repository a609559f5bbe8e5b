// Per-communicator state: a private duplicate for Overpass's own traffic, the transport over it,
// and persistent scratch memory. Created on first use among the communicator's ranks, cached on
// an MPI attribute, released by the attribute's delete callback, or at finalize for communicators
// still alive then.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "coll/selector.h"
#include "coll/team.h"
#include "gpu/memory.h"
#include "shim/pmpi_transport.h"
#include "shm/arena.h"
#include "shm/channel.h"
#include "topo/topology.h"

namespace overpass::shim {

struct CommState {
  bool inter = false;     // intercommunicator: never handled, no resources
  bool released = false;  // MPI resources freed at finalize; the object lives on until deleted
  MPI_Comm dup = MPI_COMM_NULL;
  std::unique_ptr<Transport> transport;  // UcxTransport, or PmpiTransport over `dup`
  std::uint32_t ucxCommId = 0;           // the communicator's id in UCX tags (0: not UCX)
  Topology topology;  // derived from the job's topology by rank translation, no communication
  Scratch scratch;    // for the algorithms
  Scratch staging;    // for the shim: packing of non-contiguous data, in-place copies
  HostStaging deviceStaging;           // host copies of device buffers (shim/device_staging.h)
  DeviceScratch deviceScratch;         // device memory of the device algorithms (coll/device_ipc.h)
  bool deviceCapable = false;          // some rank may pass device buffers: agreed at creation
  const Selector* selector = nullptr;  // the runtime's, for the steps of hierarchical algorithms
  SelectionCache selections;           // memoised selector decisions
  std::unique_ptr<ShmArena> arena;     // this rank's node's shared memory (shim/comm_state.cc)
  std::unique_ptr<ShmChannel> shm;     // this rank's end of it, among the node's ranks (or null)
  std::size_t streamAbove = SIZE_MAX;  // Team::streamAbove: the node ranks' share of the L3
  std::uint64_t calls = 0;             // intercepted calls on the communicator so far
  std::uint64_t boardKey = 0;          // its key on the progress board (shim/watchdog.h), or 0

  // The team's channel spans the team only when the communicator is one node; the node channel
  // serves the node steps of hierarchical algorithms.
  Team team() {
    return Team{*transport, scratch,   topology.singleNode() ? shm.get() : nullptr,
                &topology,  shm.get(), streamAbove,
                selector};
  }
};

// The state of `comm`, created if needed (a collective call on `comm`: every rank of `comm` must
// reach it at the same call). Returns nullptr and sets *error if creation failed.
CommState* commState(MPI_Comm comm, int* error);

// Creates the attribute keyval; at finalize, frees the MPI resources of every live state.
int initCommStates();
void releaseCommStates();

}  // namespace overpass::shim
