#include "kernels/reduce_kernels.h"

#include <cstring>

#include "kernels/reduce_kernel_table.h"

namespace overpass {
namespace {

struct Selected {
  KernelTable table;
  std::string_view isa;
};

Selected select() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return {kernelTableAvx512(), "avx512"};
  if (__builtin_cpu_supports("avx2")) return {kernelTableAvx2(), "avx2"};
#endif
  return {kernelTablePortable(), "portable"};
}

const Selected& selected() {
  static const Selected s = select();
  return s;
}

}  // namespace

std::string_view reductionKernelIsa() {
  return selected().isa;
}

void reduceLocal(const void* in, void* inout, std::size_t count, DataType type, ReduceOp op,
                 const UserReduce* user) {
  reduceInto(in, inout, inout, count, type, op, user);
}

void reduceInto(const void* in, const void* inout, void* out, std::size_t count, DataType type,
                ReduceOp op, const UserReduce* user) {
  if (count == 0) return;
  if (op == ReduceOp::kUser) {
    // The user's function reduces in place: the second operand goes to `out` first.
    if (out != inout) std::memcpy(out, inout, count * user->elementBytes);
    user->fn(in, out, count, user->ctx);
    return;
  }
  selected().table[static_cast<std::size_t>(type)][static_cast<std::size_t>(op)](in, inout, out,
                                                                                 count);
}

}  // namespace overpass
