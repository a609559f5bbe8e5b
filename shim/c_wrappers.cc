// The C entry points: one per entry of shim/intercepted.def (OVERPASS_C_ENTRY of
// shim/intercepted.h), plus those written by hand: the init wrappers, which start Overpass's
// global set-up, and MPI_Request_free, MPI_Wait and MPI_Waitall (shim/nonblocking.h).
#include <mpi.h>

#include "shim/collectives.h"
#include "shim/intercepted.h"
#include "shim/nonblocking.h"
#include "shim/runtime.h"

#define OVERPASS_EXPORT extern "C" __attribute__((visibility("default")))

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, args) OVERPASS_C_ENTRY(Name, args)
#include "shim/intercepted.def"

OVERPASS_EXPORT int MPI_Request_free(MPI_Request* request) {
  return overpass::shim::onRequestFree(request);
}

OVERPASS_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return overpass::shim::onWait(request, status);
}

OVERPASS_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return overpass::shim::onWaitall(count, requests, statuses);
}

OVERPASS_EXPORT int MPI_Init(int* argc, char*** argv) {
  return overpass::shim::initializeMpi(argc, argv, nullptr, nullptr);
}

OVERPASS_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return overpass::shim::initializeMpi(argc, argv, &required, provided);
}
