#include "shim/device_staging.h"

#include <algorithm>

#include "common/log.h"
#include "shim/staged_buffer.h"

namespace overpass::shim {

int DeviceStaging::add(const void*& buf, std::size_t count, MPI_Datatype type, bool read,
                       bool written) {
  if (buf == MPI_IN_PLACE || buf == nullptr || count == 0 || (!read && !written))
    return MPI_SUCCESS;
  if (count_ == kMaxBuffers) return MPI_ERR_INTERN;
  // The span the elements occupy, relative to buf: [lo, hi).
  MPI_Aint lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &trueLb, &trueExtent);
  const MPI_Aint reach = static_cast<MPI_Aint>(count - 1) * extent;
  const MPI_Aint lo = trueLb + std::min<MPI_Aint>(0, reach);
  const MPI_Aint hi = trueLb + trueExtent + std::max<MPI_Aint>(0, reach);
  const auto bytes = static_cast<std::size_t>(hi - lo);
  auto* device = const_cast<char*>(static_cast<const char*>(buf)) + lo;
  auto* host = static_cast<char*>(staging_.get(count_, bytes, memory_));
  if (!host) return MPI_ERR_NO_MEM;
  // An output whose elements do not cover their span keeps the bytes in between: copy it too.
  if (read || bytes != packedBytes(1, type) * count)
    if (memory_.toHost(host, device, bytes) != Status::kOk) return MPI_ERR_OTHER;
  staged_[count_++] = {device, host, bytes, written};
  buf = host - lo;
  return MPI_SUCCESS;
}

int DeviceStaging::finish() {
  for (int i = 0; i < count_; ++i)
    if (staged_[i].written &&
        memory_.fromHost(staged_[i].device, staged_[i].host, staged_[i].bytes) != Status::kOk)
      return MPI_ERR_OTHER;
  return MPI_SUCCESS;
}

}  // namespace overpass::shim
