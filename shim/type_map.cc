#include "shim/type_map.h"

#include <atomic>
#include <unordered_map>
#include <utility>

namespace overpass::shim {
namespace {

std::unordered_map<MPI_Datatype, DataType> gTypes;
std::atomic<unsigned> gGeneration{0};  // of gTypes: the per-thread answers below follow it

}  // namespace

void initTypeMap() {
  using enum DataType;
  const std::pair<MPI_Datatype, DataType> candidates[] = {
      {MPI_SIGNED_CHAR, kInt8},
      {MPI_UNSIGNED_CHAR, kUint8},
      {MPI_SHORT, kInt16},
      {MPI_UNSIGNED_SHORT, kUint16},
      {MPI_INT, kInt32},
      {MPI_UNSIGNED, kUint32},
      {MPI_LONG, kInt64},
      {MPI_UNSIGNED_LONG, kUint64},
      {MPI_LONG_LONG_INT, kInt64},
      {MPI_UNSIGNED_LONG_LONG, kUint64},
      {MPI_INT8_T, kInt8},
      {MPI_UINT8_T, kUint8},
      {MPI_INT16_T, kInt16},
      {MPI_UINT16_T, kUint16},
      {MPI_INT32_T, kInt32},
      {MPI_UINT32_T, kUint32},
      {MPI_INT64_T, kInt64},
      {MPI_UINT64_T, kUint64},
      {MPI_AINT, kInt64},
      {MPI_OFFSET, kInt64},
      {MPI_COUNT, kInt64},
      {MPI_FLOAT, kFloat},
      {MPI_DOUBLE, kDouble},
      {MPI_LONG_DOUBLE, kLongDouble},
      {MPI_C_FLOAT_COMPLEX, kComplexFloat},
      {MPI_C_DOUBLE_COMPLEX, kComplexDouble},
      {MPI_CXX_FLOAT_COMPLEX, kComplexFloat},
      {MPI_CXX_DOUBLE_COMPLEX, kComplexDouble},
      {MPI_C_BOOL, kBool},
      {MPI_CXX_BOOL, kBool},
      {MPI_BYTE, kByte},
      {MPI_FLOAT_INT, kFloatInt},
      {MPI_DOUBLE_INT, kDoubleInt},
      {MPI_LONG_INT, kLongInt},
      {MPI_2INT, kIntInt},
      {MPI_SHORT_INT, kShortInt},
      {MPI_LONG_DOUBLE_INT, kLongDoubleInt},
      // Fortran types, as the Fortran wrappers receive them through MPI_Type_f2c.
      {MPI_INTEGER, kInt32},
      {MPI_INTEGER1, kInt8},
      {MPI_INTEGER2, kInt16},
      {MPI_INTEGER4, kInt32},
      {MPI_INTEGER8, kInt64},
      {MPI_REAL, kFloat},
      {MPI_REAL4, kFloat},
      {MPI_REAL8, kDouble},
      {MPI_DOUBLE_PRECISION, kDouble},
      {MPI_COMPLEX, kComplexFloat},
      {MPI_COMPLEX8, kComplexFloat},
      {MPI_DOUBLE_COMPLEX, kComplexDouble},
      {MPI_COMPLEX16, kComplexDouble},
      {MPI_LOGICAL, kLogical32},
      {MPI_2INTEGER, kIntInt},
      {MPI_2REAL, kFloatFloat},
      {MPI_2DOUBLE_PRECISION, kDoubleDouble},
  };
  gTypes.clear();
  for (const auto& [handle, type] : candidates) {
    if (handle == MPI_DATATYPE_NULL) continue;
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    if (PMPI_Type_get_extent(handle, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size(handle, &size) != MPI_SUCCESS)
      continue;
    // Pair types have padding (size < extent); every other type is dense.
    const bool pair = dataTypeCategory(type) == TypeCategory::kPair;
    if (lb != 0 || static_cast<std::size_t>(extent) != dataTypeSize(type) ||
        (!pair && size != extent))
      continue;
    gTypes.emplace(handle, type);
  }
  gGeneration.fetch_add(1, std::memory_order_release);
}

std::optional<DataType> reductionType(MPI_Datatype type) {
  // The last handle each thread asked about (a program tends to repeat its types): a predefined
  // handle is never freed, so a reused handle is again not predefined and the answer stays true.
  struct Last {
    MPI_Datatype type{};
    unsigned generation = 0;
    std::optional<DataType> known;
  };
  __attribute__((tls_model("initial-exec"))) static thread_local Last last;
  const unsigned generation = gGeneration.load(std::memory_order_acquire);
  if (last.type == type && last.generation == generation) return last.known;
  const auto it = gTypes.find(type);
  last = {type, generation,
          it == gTypes.end() ? std::nullopt : std::optional<DataType>(it->second)};
  return last.known;
}

std::optional<ReduceOp> translateOp(MPI_Op op) {
  using enum ReduceOp;
  const std::pair<MPI_Op, ReduceOp> ops[] = {
      {MPI_SUM, kSum},   {MPI_PROD, kProd}, {MPI_MIN, kMin},       {MPI_MAX, kMax},
      {MPI_LAND, kLand}, {MPI_LOR, kLor},   {MPI_LXOR, kLxor},     {MPI_BAND, kBand},
      {MPI_BOR, kBor},   {MPI_BXOR, kBxor}, {MPI_MINLOC, kMinloc}, {MPI_MAXLOC, kMaxloc},
  };
  for (const auto& [handle, value] : ops)
    if (handle == op) return value;
  if (op == MPI_OP_NULL || op == MPI_REPLACE || op == MPI_NO_OP) return std::nullopt;
  return kUser;
}

}  // namespace overpass::shim
