// The table of reduction kernels, one per (type, op), as each instruction-set build of
// kernels/reduce_kernels_body.h provides it. Internal to kernels/reduce_kernels*.cc.
#pragma once

#include <array>
#include <cstddef>

#include "common/datatype.h"

namespace overpass {

// out[i] = in[i] op inout[i]; `out` is `inout` or disjoint from both.
using Kernel = void (*)(const void* in, const void* inout, void* out, std::size_t n);
inline constexpr std::size_t kNumTypes = static_cast<std::size_t>(DataType::kCount);
inline constexpr std::size_t kNumOps = static_cast<std::size_t>(ReduceOp::kCount);
using KernelTable = std::array<std::array<Kernel, kNumOps>, kNumTypes>;

KernelTable kernelTablePortable();
#if defined(__x86_64__)
KernelTable kernelTableAvx2();
KernelTable kernelTableAvx512();
#endif

}  // namespace overpass
