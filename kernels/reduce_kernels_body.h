// The bodies of the reduction kernels, compiled once per instruction set
// (kernels/reduce_kernels_<isa>.cc, each with its own compiler flags) so that
// kernels/reduce_kernels.cc can pick the widest the CPU supports at run time. Everything here has
// internal linkage: the copies compiled for different instruction sets never merge.
//
// Each file defines OVERPASS_KERNEL_TABLE_FN, the name of the function that returns its table,
// and includes this header once.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "kernels/reduce_kernel_table.h"

namespace overpass {
namespace {

template <class V, class I>
struct Pair {
  V value;
  I index;
};

template <class T>
T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Promote to at least unsigned int so that the product of two small unsigned values is not
    // computed in (signed, overflowing) int.
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// out[i] = f(in[i], inout[i]). `out` is `inout` or disjoint from both operands; the two cases
// are separate loops so that each vectorises without run-time overlap checks.
template <class T, class F>
void elementwise(const void* in, const void* inout, void* out, std::size_t n, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  if (out == inout) {
    T* __restrict b = static_cast<T*>(out);
    for (std::size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
  } else {
    const T* __restrict b = static_cast<const T*>(inout);
    T* __restrict c = static_cast<T*>(out);
    for (std::size_t i = 0; i < n; ++i) c[i] = f(a[i], b[i]);
  }
}

template <class T, ReduceOp kOp>
void kernel(const void* in, const void* inout, void* out, std::size_t n) {
  if constexpr (kOp == ReduceOp::kSum) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return wrapAdd(a, b); });
  } else if constexpr (kOp == ReduceOp::kProd) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return wrapMul(a, b); });
  } else if constexpr (kOp == ReduceOp::kMin) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return a < b ? a : b; });
  } else if constexpr (kOp == ReduceOp::kMax) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return a > b ? a : b; });
  } else if constexpr (kOp == ReduceOp::kLand) {
    elementwise<T>(in, inout, out, n,
                   [](T a, T b) { return static_cast<T>(a != T{} && b != T{}); });
  } else if constexpr (kOp == ReduceOp::kLor) {
    elementwise<T>(in, inout, out, n,
                   [](T a, T b) { return static_cast<T>(a != T{} || b != T{}); });
  } else if constexpr (kOp == ReduceOp::kLxor) {
    elementwise<T>(in, inout, out, n,
                   [](T a, T b) { return static_cast<T>((a != T{}) != (b != T{})); });
  } else if constexpr (kOp == ReduceOp::kBand) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return static_cast<T>(a & b); });
  } else if constexpr (kOp == ReduceOp::kBor) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return static_cast<T>(a | b); });
  } else if constexpr (kOp == ReduceOp::kBxor) {
    elementwise<T>(in, inout, out, n, [](T a, T b) { return static_cast<T>(a ^ b); });
  } else if constexpr (kOp == ReduceOp::kMinloc) {
    elementwise<T>(in, inout, out, n, [](T a, T b) {
      if (a.value < b.value) return a;
      if (b.value < a.value) return b;
      return T{a.value, a.index < b.index ? a.index : b.index};
    });
  } else if constexpr (kOp == ReduceOp::kMaxloc) {
    elementwise<T>(in, inout, out, n, [](T a, T b) {
      if (a.value > b.value) return a;
      if (b.value > a.value) return b;
      return T{a.value, a.index < b.index ? a.index : b.index};
    });
  }
}

template <ReduceOp... kOps>
struct OpList {};

template <class T, ReduceOp... kOps>
void fill(KernelTable& t, DataType type, OpList<kOps...>) {
  auto& row = t[static_cast<std::size_t>(type)];
  ((row[static_cast<std::size_t>(kOps)] = &kernel<T, kOps>), ...);
}

KernelTable makeTable() {
  using enum ReduceOp;
  KernelTable t{};
  constexpr OpList<kSum, kProd, kMin, kMax, kLand, kLor, kLxor, kBand, kBor, kBxor> integer;
  constexpr OpList<kSum, kProd, kMin, kMax> floating;
  constexpr OpList<kSum, kProd> complex;
  constexpr OpList<kLand, kLor, kLxor> logical;
  constexpr OpList<kBand, kBor, kBxor> bitwise;
  constexpr OpList<kMinloc, kMaxloc> pair;
  fill<std::int8_t>(t, DataType::kInt8, integer);
  fill<std::uint8_t>(t, DataType::kUint8, integer);
  fill<std::int16_t>(t, DataType::kInt16, integer);
  fill<std::uint16_t>(t, DataType::kUint16, integer);
  fill<std::int32_t>(t, DataType::kInt32, integer);
  fill<std::uint32_t>(t, DataType::kUint32, integer);
  fill<std::int64_t>(t, DataType::kInt64, integer);
  fill<std::uint64_t>(t, DataType::kUint64, integer);
  fill<float>(t, DataType::kFloat, floating);
  fill<double>(t, DataType::kDouble, floating);
  fill<long double>(t, DataType::kLongDouble, floating);
  fill<std::complex<float>>(t, DataType::kComplexFloat, complex);
  fill<std::complex<double>>(t, DataType::kComplexDouble, complex);
  fill<std::uint8_t>(t, DataType::kBool, logical);
  fill<std::int32_t>(t, DataType::kLogical32, logical);
  fill<std::uint8_t>(t, DataType::kByte, bitwise);
  fill<Pair<float, int>>(t, DataType::kFloatInt, pair);
  fill<Pair<double, int>>(t, DataType::kDoubleInt, pair);
  fill<Pair<long, int>>(t, DataType::kLongInt, pair);
  fill<Pair<int, int>>(t, DataType::kIntInt, pair);
  fill<Pair<short, int>>(t, DataType::kShortInt, pair);
  fill<Pair<long double, int>>(t, DataType::kLongDoubleInt, pair);
  fill<Pair<float, float>>(t, DataType::kFloatFloat, pair);
  fill<Pair<double, double>>(t, DataType::kDoubleDouble, pair);
  return t;
}

static_assert(sizeof(Pair<short, int>) == 8 && sizeof(Pair<long, int>) == 16 &&
              sizeof(Pair<long double, int>) == 2 * sizeof(long double));

}  // namespace

KernelTable OVERPASS_KERNEL_TABLE_FN() {
  return makeTable();
}

}  // namespace overpass
