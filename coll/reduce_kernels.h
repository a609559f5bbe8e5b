// Reduction kernels on the CPU for every predefined type and operation: inout[i] = in[i] op
// inout[i], the argument order of MPI_Reduce_local. Integer arithmetic wraps (two's complement),
// logical operations yield 0 or 1, MINLOC/MAXLOC keep the smaller index on ties.
#pragma once

#include <cstddef>

#include "common/datatype.h"

namespace overpass {

// Reduces `count` elements of type `type`; for ReduceOp::kUser, `user` supplies the function.
// The combination must satisfy isValidReduction().
void reduceLocal(const void* in, void* inout, std::size_t count, DataType type, ReduceOp op,
                 const UserReduce* user = nullptr);

}  // namespace overpass
