#include "shim/staged_buffer.h"

#include <algorithm>

#include "common/log.h"
#include "shim/type_map.h"

namespace overpass::shim {
namespace {

// Elements per PMPI_Pack call, so that positions stay within int.
int chunkElements(int size) {
  return std::max(1, (1 << 30) / std::max(size, 1));
}

}  // namespace

bool denseType(MPI_Datatype type) {
  if (auto known = reductionType(type); known && dataTypeCategory(*known) != TypeCategory::kPair)
    return true;  // a predefined type without holes
  int size = 0;
  MPI_Aint lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  PMPI_Type_size(type, &size);
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &trueLb, &trueExtent);
  return lb == 0 && trueLb == 0 && extent == size && trueExtent == size;
}

std::size_t packedBytes(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::size_t>(count) * static_cast<std::size_t>(size);
}

int StagedBuffer::init(const void* buf, std::size_t count, MPI_Datatype type, Staging& staging,
                       StagingSlot slot) {
  buf_ = const_cast<void*>(buf);
  count_ = count;
  type_ = type;
  int size = 0;
  MPI_Aint lb = 0;
  if (int rc = PMPI_Type_size(type, &size); rc != MPI_SUCCESS) return rc;
  bytes_ = count * static_cast<std::size_t>(size);
  PMPI_Type_get_extent(type, &lb, &extent_);
  staged_ = count > 0 && !denseType(type);
  data_ = staged_ ? staging.get(slot, bytes_) : buf_;
  if (staged_)
    OVERPASS_DEBUG("non-contiguous datatype: %zu element(s) staged through a %zu-byte copy", count,
                   bytes_);
  return MPI_SUCCESS;
}

int StagedBuffer::pack() const {
  return copy(true);
}
int StagedBuffer::unpack() const {
  return copy(false);
}

int StagedBuffer::copy(bool toStaging) const {
  if (!staged_) return MPI_SUCCESS;
  int size = 0;
  PMPI_Type_size(type_, &size);
  const std::size_t step = static_cast<std::size_t>(chunkElements(size));
  for (std::size_t first = 0; first < count_; first += step) {
    const int n = static_cast<int>(std::min(step, count_ - first));
    char* typed = static_cast<char*>(buf_) + static_cast<MPI_Aint>(first) * extent_;
    char* packed = static_cast<char*>(data_) + first * static_cast<std::size_t>(size);
    int position = 0;
    const int rc = toStaging
                       ? PMPI_Pack(typed, n, type_, packed, n * size, &position, MPI_COMM_SELF)
                       : PMPI_Unpack(packed, n * size, &position, typed, n, type_, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace overpass::shim
