// The process-wide state of the shim: configuration, statistics, the private world communicator,
// and the life cycle (initialisation in the init wrappers, teardown at the start of MPI_Finalize
// through an attribute on MPI_COMM_SELF).
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <optional>

#include "coll/select/selector.h"
#include "common/collective.h"
#include "common/config.h"
#include "common/fallback.h"
#include "common/stats.h"
#include "topo/job_topology.h"
#include "transport/ucx/ucx_transport.h"

namespace overpass::shim {

enum class Phase : int {
  kBeforeInit,  // MPI not initialised through Overpass (yet)
  kForeignMpi,  // not the MPI library Overpass was built for: pure pass-through, no MPI calls
  kDisabled,    // OVERPASS_DISABLE
  kActive,
  kFinalized,
};

struct Runtime {
  std::atomic<Phase> phase{Phase::kBeforeInit};
  Config config;
  Selector selector;  // built from `config` at initialisation
  Stats stats;
  MPI_Comm world = MPI_COMM_NULL;  // private duplicate of MPI_COMM_WORLD
  int worldRank = 0, worldSize = 1;
  int threadLevel = MPI_THREAD_SINGLE;
  int commKeyval = MPI_KEYVAL_INVALID;
  int selfKeyval = MPI_KEYVAL_INVALID;
  JobTopology job;  // every world rank's locality and node, agreed at initialisation
  std::unique_ptr<UcxContext> ucx;  // null: the PMPI transport serves every communicator
};

Runtime& runtime();

// The work of every init wrapper, C and Fortran: initialises the MPI library (MPI_Init where
// `required` is null, else MPI_Init_thread with *required), asking for MPI_THREAD_MULTIPLE where
// the progress thread will call it (OVERPASS_PROGRESS=thread), then starts Overpass. *provided
// (where not null): the thread level the library provides. An MPI error code.
int initializeMpi(int* argc, char*** argv, const int* required, int* provided);

// The reasons that send every call of a collective to the MPI library, whatever its arguments.
std::optional<FallbackReason> globalFallback(Collective coll);

// Marks the calling thread as inside Overpass, so calls it makes are not intercepted again. Out
// of line, so that the thread-local flag is found afresh at each use: a nonblocking collective
// (a fiber, common/fiber.h) may resume on another thread inside a guard.
class ReentryGuard {
 public:
  ReentryGuard() { set(true); }
  ~ReentryGuard() { set(false); }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;
  static bool active();
  static void set(bool active);
};

}  // namespace overpass::shim
