#include "shim/staged_buffer.h"

#include <algorithm>
#include <optional>

#include "common/log.h"
#include "shim/type_map.h"

namespace overpass::shim {
namespace {

// Elements per PMPI_Pack call, so that positions stay within int.
int chunkElements(int size) {
  return std::max(1, (1 << 30) / std::max(size, 1));
}

// The size of a predefined type without holes (the common case), known without asking the MPI
// library; none for any other type.
std::optional<std::size_t> predefinedDenseSize(MPI_Datatype type) {
  if (auto known = reductionType(type); known && dataTypeCategory(*known) != TypeCategory::kPair)
    return dataTypeSize(*known);
  return std::nullopt;
}

}  // namespace

bool denseType(MPI_Datatype type) {
  if (predefinedDenseSize(type)) return true;
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
  if (const std::optional<std::size_t> size = predefinedDenseSize(type)) {
    bytes_ = count * *size;
    extent_ = static_cast<MPI_Aint>(*size);
    staged_ = false;
    data_ = buf_;
    return MPI_SUCCESS;
  }
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
  return packElements(buf_, count_, type_, extent_, data_, toStaging);
}

int packElements(void* typed, std::size_t count, MPI_Datatype type, MPI_Aint extent, void* packed,
                 bool toPacked) {
  int size = 0;
  PMPI_Type_size(type, &size);
  const std::size_t step = static_cast<std::size_t>(chunkElements(size));
  for (std::size_t first = 0; first < count; first += step) {
    const int n = static_cast<int>(std::min(step, count - first));
    char* from = static_cast<char*>(typed) + static_cast<MPI_Aint>(first) * extent;
    char* to = static_cast<char*>(packed) + first * static_cast<std::size_t>(size);
    int position = 0;
    const int rc = toPacked ? PMPI_Pack(from, n, type, to, n * size, &position, MPI_COMM_SELF)
                            : PMPI_Unpack(to, n * size, &position, from, n, type, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

int StagedBlocks::init(const void* buf, const int* counts, const int* displs, int p,
                       MPI_Datatype type, Staging& staging, StagingSlot slot, bool copy) {
  buf_ = const_cast<void*>(buf);
  counts_ = counts;
  type_ = type;
  int size = 0;
  MPI_Aint lb = 0;
  if (int rc = PMPI_Type_size(type, &size); rc != MPI_SUCCESS) return rc;
  PMPI_Type_get_extent(type, &lb, &extent_);
  bytes_.resize(static_cast<std::size_t>(p));
  offset_.resize(static_cast<std::size_t>(p));
  typed_.resize(static_cast<std::size_t>(p));
  staged_ = copy || !denseType(type);
  std::size_t all = 0;
  for (int q = 0; q < p; ++q) {
    bytes_[q] = static_cast<std::size_t>(counts[q]) * static_cast<std::size_t>(size);
    typed_[q] = static_cast<std::ptrdiff_t>(displs[q]) * extent_;
    offset_[q] = staged_ ? static_cast<std::ptrdiff_t>(all) : typed_[q];
    all += bytes_[q];
  }
  data_ = staged_ ? staging.get(slot, all) : buf_;
  return MPI_SUCCESS;
}

int StagedBlocks::copy(int q, bool toStaging) const {
  if (!staged_ || bytes_[q] == 0) return MPI_SUCCESS;
  return packElements(static_cast<char*>(buf_) + typed_[q], static_cast<std::size_t>(counts_[q]),
                      type_, extent_, static_cast<char*>(data_) + offset_[q], toStaging);
}

int StagedBlocks::packAll() const {
  for (std::size_t q = 0; q < bytes_.size(); ++q)
    if (int rc = copy(static_cast<int>(q), true); rc != MPI_SUCCESS) return rc;
  return MPI_SUCCESS;
}

}  // namespace overpass::shim
