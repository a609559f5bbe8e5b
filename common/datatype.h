// Element types and reduction operations, independent of MPI. The shim translates MPI handles to
// these (shim/type_map.cc); the reduction kernels (kernels/reduce_kernels.cc) implement them.
#pragma once

#include <cstddef>
#include <string_view>

namespace overpass {

// X(id, name, size in bytes, category). The size is the element's extent in memory: pair types
// (MINLOC/MAXLOC) include the padding of the C struct {value; int}.
#define OVERPASS_DATATYPES(X)                                          \
  X(kInt8, "int8", 1, kInteger)                                        \
  X(kUint8, "uint8", 1, kInteger)                                      \
  X(kInt16, "int16", 2, kInteger)                                      \
  X(kUint16, "uint16", 2, kInteger)                                    \
  X(kInt32, "int32", 4, kInteger)                                      \
  X(kUint32, "uint32", 4, kInteger)                                    \
  X(kInt64, "int64", 8, kInteger)                                      \
  X(kUint64, "uint64", 8, kInteger)                                    \
  X(kFloat, "float", 4, kFloating)                                     \
  X(kDouble, "double", 8, kFloating)                                   \
  X(kLongDouble, "long_double", sizeof(long double), kFloating)        \
  X(kComplexFloat, "complex_float", 8, kComplex)                       \
  X(kComplexDouble, "complex_double", 16, kComplex)                    \
  X(kBool, "bool", 1, kLogical)                                        \
  X(kLogical32, "logical32", 4, kLogical)                              \
  X(kByte, "byte", 1, kByte)                                           \
  X(kFloatInt, "float_int", 8, kPair)                                  \
  X(kDoubleInt, "double_int", 16, kPair)                               \
  X(kLongInt, "long_int", 16, kPair)                                   \
  X(kIntInt, "int_int", 8, kPair)                                      \
  X(kShortInt, "short_int", 8, kPair)                                  \
  X(kLongDoubleInt, "long_double_int", 2 * sizeof(long double), kPair) \
  X(kFloatFloat, "float_float", 8, kPair)                              \
  X(kDoubleDouble, "double_double", 16, kPair)

enum class TypeCategory { kInteger, kFloating, kComplex, kLogical, kByte, kPair };

enum class DataType : int {
#define OVERPASS_X(id, name, size, cat) id,
  OVERPASS_DATATYPES(OVERPASS_X)
#undef OVERPASS_X
      kCount
};

#define OVERPASS_REDUCE_OPS(X) \
  X(kSum, "sum")               \
  X(kProd, "prod")             \
  X(kMin, "min")               \
  X(kMax, "max")               \
  X(kLand, "land")             \
  X(kLor, "lor")               \
  X(kLxor, "lxor")             \
  X(kBand, "band")             \
  X(kBor, "bor")               \
  X(kBxor, "bxor")             \
  X(kMinloc, "minloc")         \
  X(kMaxloc, "maxloc")         \
  X(kUser, "user")

enum class ReduceOp : int {
#define OVERPASS_X(id, name) id,
  OVERPASS_REDUCE_OPS(OVERPASS_X)
#undef OVERPASS_X
      kCount
};

std::size_t dataTypeSize(DataType t);
std::string_view dataTypeName(DataType t);
TypeCategory dataTypeCategory(DataType t);
std::string_view reduceOpName(ReduceOp op);

// Whether MPI defines `op` on elements of type `t` (MPI-4.0 section 6.9.2); kUser is valid for any
// type, its function is supplied by the caller.
bool isValidReduction(DataType t, ReduceOp op);

// Whether the bits of a reduction can depend on the order in which contributions are combined:
// floating-point and complex elements (rounding; also the sign of zero and NaN payloads under
// MIN/MAX), pairs with a floating-point value, and user-defined operations. Integer, logical and
// bitwise reductions are exact in any order.
bool isOrderSensitive(DataType t, ReduceOp op);

// A reduction the caller supplies (an MPI user-defined op, applied through the MPI library).
// Computes inout[i] = in[i] op inout[i] for `count` elements.
struct UserReduce {
  void (*fn)(const void* in, void* inout, std::size_t count, void* ctx) = nullptr;
  void* ctx = nullptr;
  bool commutative = true;
  std::size_t elementBytes = 0;  // extent of one element: required (reduceInto copies elements)
};

}  // namespace overpass
