// The shim's implementation of each intercepted collective, with the MPI signature; the C and
// Fortran entry points call these. Declared from the one list, shim/intercepted.def.
#pragma once

#include <mpi.h>

#include "shim/intercepted.h"

namespace overpass::shim {

#define OVERPASS_COLLECTIVE(Name, lower, UPPER, coll, args) int on##Name(OVERPASS_C_PARAMS(args));
#include "shim/intercepted.def"

}  // namespace overpass::shim
