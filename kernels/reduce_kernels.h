// Reduction kernels on the CPU for every predefined type and operation: inout[i] = in[i] op
// inout[i], the argument order of MPI_Reduce_local. Integer arithmetic wraps (two's complement),
// logical operations yield 0 or 1, MINLOC/MAXLOC keep the smaller index on ties.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/datatype.h"

namespace overpass {

// Reduces `count` elements of type `type`; for ReduceOp::kUser, `user` supplies the function.
// The combination must satisfy isValidReduction().
void reduceLocal(const void* in, void* inout, std::size_t count, DataType type, ReduceOp op,
                 const UserReduce* user = nullptr);

// The same combination written elsewhere in one pass: out[i] = in[i] op inout[i], reading both
// operands and writing the result without a copy first (for pipelined and rank-order
// algorithms). `out` may be `inout` or disjoint from both; it must not overlap `in`.
void reduceInto(const void* in, const void* inout, void* out, std::size_t count, DataType type,
                ReduceOp op, const UserReduce* user = nullptr);

// The instruction set of the kernels chosen for this CPU at load: avx512, avx2 or portable.
std::string_view reductionKernelIsa();

}  // namespace overpass
