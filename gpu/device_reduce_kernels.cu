// The reduction kernels of the CUDA backend: out[i] = a[i] op b[i] for every predefined type and
// operation that has device arithmetic (long double has none: those reductions stay on the host),
// reading both operands and writing the result in one pass (reduce and copy at once). Compiled
// by nvcc into a fatbin embedded in the library and loaded through the driver
// (gpu/cuda_memory.cc): no CUDA runtime is linked. Built with -fmad=false, so that no multiply
// and add fuse and the bits equal the host kernels' (kernels/reduce_kernels_body.h).
//
// Kernel names: overpass_reduce_<type>_<op> with the names of common/datatype.h.
#include <cstdint>

namespace {

template <class V, class I>
struct Pair {
  V value;
  I index;
};

struct ComplexF {
  float re, im;
};
struct ComplexD {
  double re, im;
};

enum Op { kSum, kProd, kMin, kMax, kLand, kLor, kLxor, kBand, kBor, kBxor, kMinloc, kMaxloc };

template <class T>
__device__ T add(T a, T b) {
  return a + b;
}
template <class T>
__device__ T mul(T a, T b) {
  return a * b;
}
// Integer sums and products wrap, as on the host (computed unsigned: no signed overflow).
#define OVERPASS_WRAPPING(T, U)                                                   \
  template <>                                                                     \
  __device__ T add<T>(T a, T b) {                                                 \
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b))); \
  }                                                                               \
  template <>                                                                     \
  __device__ T mul<T>(T a, T b) {                                                 \
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b))); \
  }
OVERPASS_WRAPPING(std::int8_t, unsigned)
OVERPASS_WRAPPING(std::uint8_t, unsigned)
OVERPASS_WRAPPING(std::int16_t, unsigned)
OVERPASS_WRAPPING(std::uint16_t, unsigned)
OVERPASS_WRAPPING(std::int32_t, unsigned)
OVERPASS_WRAPPING(std::uint32_t, unsigned)
OVERPASS_WRAPPING(std::int64_t, unsigned long long)
OVERPASS_WRAPPING(std::uint64_t, unsigned long long)
#undef OVERPASS_WRAPPING
template <>
__device__ ComplexF add<ComplexF>(ComplexF a, ComplexF b) {
  return {a.re + b.re, a.im + b.im};
}
template <>
__device__ ComplexD add<ComplexD>(ComplexD a, ComplexD b) {
  return {a.re + b.re, a.im + b.im};
}
template <>
__device__ ComplexF mul<ComplexF>(ComplexF a, ComplexF b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <>
__device__ ComplexD mul<ComplexD>(ComplexD a, ComplexD b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

template <class T, Op kOp>
__device__ T apply(T a, T b) {
  if constexpr (kOp == kSum) return add(a, b);
  if constexpr (kOp == kProd) return mul(a, b);
  if constexpr (kOp == kMin) return a < b ? a : b;
  if constexpr (kOp == kMax) return a > b ? a : b;
  if constexpr (kOp == kLand) return static_cast<T>(a != T{} && b != T{});
  if constexpr (kOp == kLor) return static_cast<T>(a != T{} || b != T{});
  if constexpr (kOp == kLxor) return static_cast<T>((a != T{}) != (b != T{}));
  if constexpr (kOp == kBand) return static_cast<T>(a & b);
  if constexpr (kOp == kBor) return static_cast<T>(a | b);
  if constexpr (kOp == kBxor) return static_cast<T>(a ^ b);
  if constexpr (kOp == kMinloc) {
    if (a.value < b.value) return a;
    if (b.value < a.value) return b;
    return T{a.value, a.index < b.index ? a.index : b.index};
  }
  if constexpr (kOp == kMaxloc) {
    if (a.value > b.value) return a;
    if (b.value > a.value) return b;
    return T{a.value, a.index < b.index ? a.index : b.index};
  }
}

// Grid-stride loop: any launch size covers any n.
template <class T, Op kOp>
__device__ void reduceBody(const T* a, const T* b, T* out, unsigned long long n) {
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    out[i] = apply<T, kOp>(a[i], b[i]);
}

}  // namespace

#define OVERPASS_KERNEL(name, T, op)                                                       \
  extern "C" __global__ void overpass_reduce_##name##_##op(const T* a, const T* b, T* out, \
                                                           unsigned long long n) {         \
    reduceBody<T, op##_>(a, b, out, n);                                                    \
  }
// Op tokens as in common/datatype.h's names, mapped onto the enum above.
constexpr Op sum_ = kSum, prod_ = kProd, min_ = kMin, max_ = kMax, land_ = kLand, lor_ = kLor,
             lxor_ = kLxor, band_ = kBand, bor_ = kBor, bxor_ = kBxor, minloc_ = kMinloc,
             maxloc_ = kMaxloc;

// clang-format off
#define OVERPASS_INTEGER(name, T)                                                        \
  OVERPASS_KERNEL(name, T, sum) OVERPASS_KERNEL(name, T, prod)                           \
  OVERPASS_KERNEL(name, T, min) OVERPASS_KERNEL(name, T, max)                            \
  OVERPASS_KERNEL(name, T, land) OVERPASS_KERNEL(name, T, lor)                           \
  OVERPASS_KERNEL(name, T, lxor) OVERPASS_KERNEL(name, T, band)                          \
  OVERPASS_KERNEL(name, T, bor) OVERPASS_KERNEL(name, T, bxor)
// clang-format on
OVERPASS_INTEGER(int8, std::int8_t)
OVERPASS_INTEGER(uint8, std::uint8_t)
OVERPASS_INTEGER(int16, std::int16_t)
OVERPASS_INTEGER(uint16, std::uint16_t)
OVERPASS_INTEGER(int32, std::int32_t)
OVERPASS_INTEGER(uint32, std::uint32_t)
OVERPASS_INTEGER(int64, std::int64_t)
OVERPASS_INTEGER(uint64, std::uint64_t)
#define OVERPASS_FLOATING(name, T) \
  OVERPASS_KERNEL(name, T, sum)    \
  OVERPASS_KERNEL(name, T, prod) OVERPASS_KERNEL(name, T, min) OVERPASS_KERNEL(name, T, max)
OVERPASS_FLOATING(float, float)
OVERPASS_FLOATING(double, double)
OVERPASS_KERNEL(complex_float, ComplexF, sum)
OVERPASS_KERNEL(complex_float, ComplexF, prod)
OVERPASS_KERNEL(complex_double, ComplexD, sum)
OVERPASS_KERNEL(complex_double, ComplexD, prod)
OVERPASS_KERNEL(bool, std::uint8_t, land)
OVERPASS_KERNEL(bool, std::uint8_t, lor)
OVERPASS_KERNEL(bool, std::uint8_t, lxor)
OVERPASS_KERNEL(logical32, std::int32_t, land)
OVERPASS_KERNEL(logical32, std::int32_t, lor)
OVERPASS_KERNEL(logical32, std::int32_t, lxor)
OVERPASS_KERNEL(byte, std::uint8_t, band)
OVERPASS_KERNEL(byte, std::uint8_t, bor)
OVERPASS_KERNEL(byte, std::uint8_t, bxor)
using FloatInt = Pair<float, int>;
using DoubleInt = Pair<double, int>;
using LongInt = Pair<long, int>;
using IntInt = Pair<int, int>;
using ShortInt = Pair<short, int>;
using FloatFloat = Pair<float, float>;
using DoubleDouble = Pair<double, double>;
#define OVERPASS_PAIR(name, T) OVERPASS_KERNEL(name, T, minloc) OVERPASS_KERNEL(name, T, maxloc)
OVERPASS_PAIR(float_int, FloatInt)
OVERPASS_PAIR(double_int, DoubleInt)
OVERPASS_PAIR(long_int, LongInt)
OVERPASS_PAIR(int_int, IntInt)
OVERPASS_PAIR(short_int, ShortInt)
OVERPASS_PAIR(float_float, FloatFloat)
OVERPASS_PAIR(double_double, DoubleDouble)
