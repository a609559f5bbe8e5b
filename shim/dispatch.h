// Dispatch: the one place that decides, for every intercepted call, between an Overpass
// algorithm and the MPI library (PMPI), runs it, and records what ran.
//
// Order of the decision, each step on facts every rank of the communicator shares:
//   1. global reasons (not initialised, disabled, excluded by OVERPASS_COLLS, re-entry);
//   2. arguments the MPI library must reject (null communicator, negative count, ...);
//   3. the communicator's state, created at the first call on it (intercommunicators fall back);
//      its engine, built when the warm-up ends (until then, every call goes to the MPI library);
//   4. the call's own reasons (operation and datatype of reductions);
//   5. the selector, on the call's shape, which includes the communicator's memory kind (host, or
//      device where some rank may pass device buffers): a host algorithm, the MPI library, the
//      staging pipeline or a device algorithm. A device algorithm or the pipeline may decline a
//      call in its own first round, alike on every rank; the selection memo then passes it over
//      for that shape (coll/select/selector.h, SelectionCache) and the next choice runs.
// A rank-local fact never changes the path: a datatype that needs packing is packed, and this
// rank's device buffers (classified once per call) are replaced by host copies for the host
// algorithms and the MPI library (shim/device_staging.h).
#pragma once

#include <mpi.h>

#include "coll/select/cost_model.h"
#include "common/status.h"
#include "shim/call.h"

namespace overpass::shim {

struct CommState;

// Runs `call` (shim/call.h) and returns its MPI error code, raised through the communicator's
// error handler as the MPI library would. Exceptions never cross the C ABI.
int dispatch(Call& call);

// Raises `code` through the error handler of `comm`, as the MPI library would.
int raiseError(MPI_Comm comm, int code);

// The MPI error code for an algorithm that failed with `status`: the MPI library's own code when
// its point-to-point calls failed, otherwise the class that fits the status.
int errorCode(CommState& state, Status status);

}  // namespace overpass::shim
