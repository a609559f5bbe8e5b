// The Fortran entry points. Open MPI's Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) call
// PMPI_* directly, so a C-only shim never sees Fortran programs: Overpass defines the Fortran
// names itself (mpi_x, mpi_x_, mpi_x__, MPI_X and mpi_x_f08_). The bodies of the collectives and
// their names are generated from shim/intercepted.def (OVERPASS_FORTRAN_BODY and
// OVERPASS_FORTRAN_ALIASES of shim/intercepted.h: handles converted with the f2c functions, the
// Fortran sentinels MPI_IN_PLACE and MPI_BOTTOM translated, an omitted ierror accepted, null in
// mpi_f08); the life-cycle bodies and MPI_Request_free's are written here. It never defines Open
// MPI's internal ompi_x_f, which is the same function as pmpi_x_.
#include <dlfcn.h>
#include <mpi.h>

#include "shim/collectives.h"
#include "shim/intercepted.h"
#include "shim/nonblocking.h"
#include "shim/runtime.h"

extern "C" {

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, args) OVERPASS_FORTRAN_BODY(Name, lower, args)
#include "shim/intercepted.def"

// Life cycle: Open MPI's mpi_init_ calls PMPI_Init itself, so Fortran programs need these to
// start Overpass.
void overpass_f_init(MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(init, ierror)
  overpass::shim::fortran::setError(
      ierror, overpass::shim::initializeMpi(nullptr, nullptr, nullptr, nullptr));
}

void overpass_f_init_thread(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(init_thread, required, provided, ierror)
  const int cRequired = *required;
  int cProvided = MPI_THREAD_SINGLE;
  const int rc = overpass::shim::initializeMpi(nullptr, nullptr, &cRequired, &cProvided);
  *provided = static_cast<MPI_Fint>(cProvided);
  overpass::shim::fortran::setError(ierror, rc);
}

// Open MPI's mpi_request_free_ calls PMPI_Request_free itself.
void overpass_f_request_free(MPI_Fint* request, MPI_Fint* ierror) {
  OVERPASS_FORWARD_IF_FOREIGN(request_free, request, ierror)
  MPI_Request c = PMPI_Request_f2c(*request);
  const int rc = overpass::shim::onRequestFree(&c);
  if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(c);
  overpass::shim::fortran::setError(ierror, rc);
}

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, args) OVERPASS_FORTRAN_ALIASES(lower, UPPER)
#define OVERPASS_BY_HAND(Name, lower, UPPER) OVERPASS_FORTRAN_ALIASES(lower, UPPER)
#include "shim/intercepted.def"

}  // extern "C"
