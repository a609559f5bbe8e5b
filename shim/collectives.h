// The shim's implementation of each intercepted collective, with the MPI signature; the C and
// Fortran entry points call these.
#pragma once

#include <mpi.h>

namespace overpass::shim {

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, params, args) int on##Name params;
#include "shim/intercepted.def"

}  // namespace overpass::shim
