// Translation of MPI datatypes and operations to Overpass's own (common/datatype.h).
#pragma once

#include <mpi.h>

#include <optional>

#include "common/datatype.h"

namespace overpass::shim {

// Builds the datatype table, keeping only the types whose size and extent in this MPI library
// match Overpass's element layout. Called once at initialisation.
void initTypeMap();

// The element type of a predefined MPI datatype that reductions can use, if any.
std::optional<DataType> reductionType(MPI_Datatype type);

// The predefined operation, ReduceOp::kUser for a user-defined one, nullopt for operations
// collectives do not accept (MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL).
std::optional<ReduceOp> translateOp(MPI_Op op);

}  // namespace overpass::shim
