#include "coll/reduce_kernels.h"

#include <array>
#include <complex>
#include <cstdint>
#include <type_traits>

namespace overpass {
namespace {

template <class V, class I>
struct Pair {
  V value;
  I index;
};

using Kernel = void (*)(const void*, void*, std::size_t);

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

// `in` and `inout` never overlap (MPI forbids aliased buffers): __restrict lets the compiler
// vectorise without run-time overlap checks.
template <class T, class F>
void elementwise(const void* in, void* inout, std::size_t n, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  T* __restrict b = static_cast<T*>(inout);
  for (std::size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
}

template <class T, ReduceOp kOp>
void kernel(const void* in, void* inout, std::size_t n) {
  if constexpr (kOp == ReduceOp::kSum) {
    elementwise<T>(in, inout, n, [](T a, T b) { return wrapAdd(a, b); });
  } else if constexpr (kOp == ReduceOp::kProd) {
    elementwise<T>(in, inout, n, [](T a, T b) { return wrapMul(a, b); });
  } else if constexpr (kOp == ReduceOp::kMin) {
    elementwise<T>(in, inout, n, [](T a, T b) { return a < b ? a : b; });
  } else if constexpr (kOp == ReduceOp::kMax) {
    elementwise<T>(in, inout, n, [](T a, T b) { return a > b ? a : b; });
  } else if constexpr (kOp == ReduceOp::kLand) {
    elementwise<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a != T{} && b != T{}); });
  } else if constexpr (kOp == ReduceOp::kLor) {
    elementwise<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a != T{} || b != T{}); });
  } else if constexpr (kOp == ReduceOp::kLxor) {
    elementwise<T>(in, inout, n, [](T a, T b) { return static_cast<T>((a != T{}) != (b != T{})); });
  } else if constexpr (kOp == ReduceOp::kBand) {
    elementwise<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a & b); });
  } else if constexpr (kOp == ReduceOp::kBor) {
    elementwise<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a | b); });
  } else if constexpr (kOp == ReduceOp::kBxor) {
    elementwise<T>(in, inout, n, [](T a, T b) { return static_cast<T>(a ^ b); });
  } else if constexpr (kOp == ReduceOp::kMinloc) {
    elementwise<T>(in, inout, n, [](T a, T b) {
      if (a.value < b.value) return a;
      if (b.value < a.value) return b;
      return T{a.value, a.index < b.index ? a.index : b.index};
    });
  } else if constexpr (kOp == ReduceOp::kMaxloc) {
    elementwise<T>(in, inout, n, [](T a, T b) {
      if (a.value > b.value) return a;
      if (b.value > a.value) return b;
      return T{a.value, a.index < b.index ? a.index : b.index};
    });
  }
}

constexpr std::size_t kNumTypes = static_cast<std::size_t>(DataType::kCount);
constexpr std::size_t kNumOps = static_cast<std::size_t>(ReduceOp::kCount);
using KernelTable = std::array<std::array<Kernel, kNumOps>, kNumTypes>;

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

const KernelTable kTable = makeTable();

static_assert(sizeof(Pair<short, int>) == 8 && sizeof(Pair<long, int>) == 16 &&
              sizeof(Pair<long double, int>) == 2 * sizeof(long double));

}  // namespace

void reduceLocal(const void* in, void* inout, std::size_t count, DataType type, ReduceOp op,
                 const UserReduce* user) {
  if (count == 0) return;
  if (op == ReduceOp::kUser) {
    user->fn(in, inout, count, user->ctx);
    return;
  }
  kTable[static_cast<std::size_t>(type)][static_cast<std::size_t>(op)](in, inout, count);
}

}  // namespace overpass
