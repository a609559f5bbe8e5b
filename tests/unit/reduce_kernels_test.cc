#include "kernels/reduce_kernels.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "element_bytes.h"
#include "kernels/reduce_kernel_table.h"

namespace overpass {
namespace {

template <class T>
std::vector<T> reduce(std::vector<T> in, std::vector<T> inout, DataType type, ReduceOp op) {
  reduceLocal(in.data(), inout.data(), in.size(), type, op);
  return inout;
}

TEST(ReduceKernels, IntegerSumWrapsInsteadOfSaturating) {
  // Open MPI 4.1's AVX component saturates 8-bit sums; MPI requires two's complement wrapping.
  std::vector<std::int8_t> a(67, 100), b(67, 100);
  for (std::int8_t v : reduce(a, b, DataType::kInt8, ReduceOp::kSum)) EXPECT_EQ(v, -56);
  std::vector<std::uint8_t> c(33, 200), d(33, 100);
  for (std::uint8_t v : reduce(c, d, DataType::kUint8, ReduceOp::kSum)) EXPECT_EQ(v, 44);
  std::vector<std::int32_t> e{INT32_MAX}, f{1};
  EXPECT_EQ(reduce(e, f, DataType::kInt32, ReduceOp::kSum)[0], INT32_MIN);
  std::vector<std::int16_t> g{300}, h{300};
  EXPECT_EQ(reduce(g, h, DataType::kInt16, ReduceOp::kProd)[0], static_cast<std::int16_t>(90000));
  std::vector<std::uint16_t> i{65535}, j{65535};
  EXPECT_EQ(reduce(i, j, DataType::kUint16, ReduceOp::kProd)[0], 1);
}

TEST(ReduceKernels, ArithmeticAndBitwise) {
  std::vector<std::int32_t> a{1, -2, 3, 0b1100}, b{4, 5, -6, 0b1010};
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kSum),
            (std::vector<std::int32_t>{5, 3, -3, 22}));
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kProd),
            (std::vector<std::int32_t>{4, -10, -18, 120}));
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kMin),
            (std::vector<std::int32_t>{1, -2, -6, 10}));
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kMax),
            (std::vector<std::int32_t>{4, 5, 3, 12}));
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kBand)[3], 0b1000);
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kBor)[3], 0b1110);
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kBxor)[3], 0b0110);
  std::vector<double> x{1.5, -2}, y{2.25, 8};
  EXPECT_EQ(reduce(x, y, DataType::kDouble, ReduceOp::kSum), (std::vector<double>{3.75, 6}));
  EXPECT_EQ(reduce(x, y, DataType::kDouble, ReduceOp::kProd), (std::vector<double>{3.375, -16}));
  std::vector<long double> p{1.5L}, q{-3.0L};
  EXPECT_EQ(reduce(p, q, DataType::kLongDouble, ReduceOp::kMin)[0], -3.0L);
  std::vector<std::complex<double>> u{{1, 2}}, v{{3, -1}};
  EXPECT_EQ(reduce(u, v, DataType::kComplexDouble, ReduceOp::kProd)[0], std::complex<double>(5, 5));
  EXPECT_EQ(reduce(u, v, DataType::kComplexDouble, ReduceOp::kSum)[0], std::complex<double>(4, 1));
  std::vector<std::uint8_t> m{0xF0}, n{0x3C};
  EXPECT_EQ(reduce(m, n, DataType::kByte, ReduceOp::kBxor)[0], 0xCC);
}

TEST(ReduceKernels, LogicalYieldZeroOrOne) {
  std::vector<std::int32_t> a{0, 7, 0, -3}, b{0, 0, 5, 9};
  EXPECT_EQ(reduce(a, b, DataType::kLogical32, ReduceOp::kLand),
            (std::vector<std::int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(reduce(a, b, DataType::kLogical32, ReduceOp::kLor),
            (std::vector<std::int32_t>{0, 1, 1, 1}));
  EXPECT_EQ(reduce(a, b, DataType::kLogical32, ReduceOp::kLxor),
            (std::vector<std::int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(reduce(a, b, DataType::kInt32, ReduceOp::kLor),
            (std::vector<std::int32_t>{0, 1, 1, 1}));
  std::vector<std::uint8_t> c{0, 1, 1}, d{1, 1, 0};
  EXPECT_EQ(reduce(c, d, DataType::kBool, ReduceOp::kLand), (std::vector<std::uint8_t>{0, 1, 0}));
}

TEST(ReduceKernels, MinlocMaxlocKeepSmallerIndexOnTies) {
  struct DoubleInt {
    double value;
    int index;
  };
  std::vector<DoubleInt> a{{1.0, 5}, {2.0, 1}, {3.0, 9}}, b{{1.0, 3}, {1.0, 7}, {4.0, 2}};
  auto min = a, max = a;
  auto bmin = b, bmax = b;
  reduceLocal(min.data(), bmin.data(), 3, DataType::kDoubleInt, ReduceOp::kMinloc);
  reduceLocal(max.data(), bmax.data(), 3, DataType::kDoubleInt, ReduceOp::kMaxloc);
  EXPECT_EQ(bmin[0].value, 1.0);
  EXPECT_EQ(bmin[0].index, 3);
  EXPECT_EQ(bmin[1].value, 1.0);
  EXPECT_EQ(bmin[1].index, 7);
  EXPECT_EQ(bmax[0].index, 3);
  EXPECT_EQ(bmax[1].index, 1);
  EXPECT_EQ(bmax[2].value, 4.0);
  EXPECT_EQ(bmax[2].index, 2);
  struct ShortInt {
    short value;
    int index;
  };
  std::vector<ShortInt> s{{-4, 2}}, t{{-4, 1}};
  reduceLocal(s.data(), t.data(), 1, DataType::kShortInt, ReduceOp::kMaxloc);
  EXPECT_EQ(t[0].index, 1);
}

TEST(ReduceKernels, EveryValidCombinationHasAKernel) {
  for (int t = 0; t < static_cast<int>(DataType::kCount); ++t) {
    for (int o = 0; o < static_cast<int>(ReduceOp::kUser); ++o) {
      const auto type = static_cast<DataType>(t);
      const auto op = static_cast<ReduceOp>(o);
      if (!isValidReduction(type, op)) continue;
      std::vector<unsigned char> a(3 * dataTypeSize(type)), b(a.size());
      reduceLocal(a.data(), b.data(), 3, type, op);  // must not crash (null kernel)
    }
  }
  EXPECT_FALSE(isValidReduction(DataType::kComplexFloat, ReduceOp::kMax));
  EXPECT_FALSE(isValidReduction(DataType::kDouble, ReduceOp::kBand));
  EXPECT_FALSE(isValidReduction(DataType::kByte, ReduceOp::kSum));
  EXPECT_FALSE(isValidReduction(DataType::kInt32, ReduceOp::kMinloc));
  EXPECT_FALSE(isValidReduction(DataType::kBool, ReduceOp::kSum));
  EXPECT_TRUE(isValidReduction(DataType::kFloatInt, ReduceOp::kMaxloc));
}

// The kernels compiled for each instruction set give the same bits as the portable ones, in
// place and into a separate output, at lengths around the vector widths.
TEST(ReduceKernels, EveryInstructionSetMatchesThePortableKernels) {
  std::vector<std::pair<std::string, KernelTable>> tables = {{"portable", kernelTablePortable()}};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) tables.emplace_back("avx2", kernelTableAvx2());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    tables.emplace_back("avx512", kernelTableAvx512());
#endif
  std::printf("kernel sets on this CPU: %zu (in use: %s)\n", tables.size(),
              std::string(reductionKernelIsa()).c_str());
  std::mt19937_64 gen(42);
  for (std::size_t t = 0; t < kNumTypes; ++t)
    for (std::size_t o = 0; o < kNumOps; ++o) {
      const auto type = static_cast<DataType>(t);
      const auto op = static_cast<ReduceOp>(o);
      if (op == ReduceOp::kUser || !isValidReduction(type, op)) continue;
      for (std::size_t n : {1ul, 15ul, 64ul, 1027ul}) {
        const std::size_t bytes = n * dataTypeSize(type);
        std::vector<unsigned char> a(bytes), b(bytes);
        for (auto& x : a) x = static_cast<unsigned char>(gen());
        for (auto& x : b) x = static_cast<unsigned char>(gen());
        if (dataTypeCategory(type) == TypeCategory::kFloating ||
            dataTypeCategory(type) == TypeCategory::kComplex || type == DataType::kFloatInt ||
            type == DataType::kDoubleInt || type == DataType::kLongDoubleInt ||
            type == DataType::kFloatFloat || type == DataType::kDoubleDouble) {
          // Finite values: random bytes make NaNs, whose payloads may legitimately differ.
          for (std::size_t i = 0; i < bytes; ++i) {
            a[i] &= (i % 4 == 3) ? 0x3F : 0xFF;
            b[i] &= (i % 4 == 3) ? 0x3F : 0xFF;
          }
        }
        std::vector<unsigned char> want = b, into(bytes);
        tables[0].second[t][o](a.data(), want.data(), want.data(), n);
        for (const auto& [name, table] : tables) {
          std::vector<unsigned char> inPlace = b;
          table[t][o](a.data(), inPlace.data(), inPlace.data(), n);
          table[t][o](a.data(), b.data(), into.data(), n);
          EXPECT_EQ(test::canonical(type, inPlace.data(), n), test::canonical(type, want.data(), n))
              << name << " " << dataTypeName(type) << " " << reduceOpName(op) << " n=" << n;
          EXPECT_EQ(test::canonical(type, into.data(), n), test::canonical(type, want.data(), n))
              << name << " into, " << dataTypeName(type) << " " << reduceOpName(op) << " n=" << n;
        }
      }
    }
}

TEST(ReduceKernels, UserOperationIsCalled) {
  UserReduce user{[](const void* in, void* inout, std::size_t n, void* ctx) {
                    auto* a = static_cast<const int*>(in);
                    auto* b = static_cast<int*>(inout);
                    for (std::size_t i = 0; i < n; ++i) b[i] = a[i] * 10 + b[i];
                    ++*static_cast<int*>(ctx);
                  },
                  nullptr, true, sizeof(int)};
  int calls = 0;
  user.ctx = &calls;
  std::vector<int> a{1, 2}, b{3, 4};
  reduceLocal(a.data(), b.data(), 2, DataType::kByte, ReduceOp::kUser, &user);
  EXPECT_EQ(b, (std::vector<int>{13, 24}));
  EXPECT_EQ(calls, 1);
  // Into a third buffer: `inout` is read, not written.
  std::vector<int> c(2, -1);
  reduceInto(a.data(), b.data(), c.data(), 2, DataType::kByte, ReduceOp::kUser, &user);
  EXPECT_EQ(c, (std::vector<int>{23, 44}));
  EXPECT_EQ(b, (std::vector<int>{13, 24}));
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace overpass
