// The C entry points: one per entry of shim/intercepted.def (OVERPASS_C_ENTRY of
// shim/intercepted.h), plus the init wrappers, which are written by hand because they start
// Overpass's global set-up.
#include <mpi.h>

#include "shim/collectives.h"
#include "shim/intercepted.h"
#include "shim/runtime.h"

#define OVERPASS_EXPORT extern "C" __attribute__((visibility("default")))

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, args) OVERPASS_C_ENTRY(Name, args)
#include "shim/intercepted.def"

OVERPASS_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    overpass::shim::initializeRuntime(provided);
  }
  return rc;
}

OVERPASS_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) overpass::shim::initializeRuntime(*provided);
  return rc;
}
