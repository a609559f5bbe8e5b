#include "common/datatype.h"

#include <array>

namespace overpass {
namespace {

struct TypeInfo {
  std::string_view name;
  std::size_t size;
  TypeCategory category;
};

constexpr std::array<TypeInfo, static_cast<std::size_t>(DataType::kCount)> kTypes = {{
#define OVERPASS_X(id, name, size, cat) {name, size, TypeCategory::cat},
    OVERPASS_DATATYPES(OVERPASS_X)
#undef OVERPASS_X
}};

constexpr std::array<std::string_view, static_cast<std::size_t>(ReduceOp::kCount)> kOps = {
#define OVERPASS_X(id, name) name,
    OVERPASS_REDUCE_OPS(OVERPASS_X)
#undef OVERPASS_X
};

}  // namespace

std::size_t dataTypeSize(DataType t) {
  return kTypes[static_cast<std::size_t>(t)].size;
}
std::string_view dataTypeName(DataType t) {
  return kTypes[static_cast<std::size_t>(t)].name;
}
TypeCategory dataTypeCategory(DataType t) {
  return kTypes[static_cast<std::size_t>(t)].category;
}
std::string_view reduceOpName(ReduceOp op) {
  return kOps[static_cast<std::size_t>(op)];
}

bool isValidReduction(DataType t, ReduceOp op) {
  const TypeCategory c = dataTypeCategory(t);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kProd:
      return c == TypeCategory::kInteger || c == TypeCategory::kFloating ||
             c == TypeCategory::kComplex;
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      return c == TypeCategory::kInteger || c == TypeCategory::kFloating;
    case ReduceOp::kLand:
    case ReduceOp::kLor:
    case ReduceOp::kLxor:
      return c == TypeCategory::kInteger || c == TypeCategory::kLogical;
    case ReduceOp::kBand:
    case ReduceOp::kBor:
    case ReduceOp::kBxor:
      return c == TypeCategory::kInteger || c == TypeCategory::kByte;
    case ReduceOp::kMinloc:
    case ReduceOp::kMaxloc:
      return c == TypeCategory::kPair;
    case ReduceOp::kUser:
      return true;
    case ReduceOp::kCount:
      break;
  }
  return false;
}

bool isOrderSensitive(DataType t, ReduceOp op) {
  using enum DataType;
  if (op == ReduceOp::kUser) return true;
  switch (dataTypeCategory(t)) {
    case TypeCategory::kFloating:
    case TypeCategory::kComplex:
      return true;
    case TypeCategory::kPair:
      return t == kFloatInt || t == kDoubleInt || t == kLongDoubleInt || t == kFloatFloat ||
             t == kDoubleDouble;
    default:
      return false;
  }
}

}  // namespace overpass
