// A contiguous view of `count` elements of an MPI datatype: the application's buffer itself when
// the type is dense (no holes, starts at the buffer), otherwise a staging copy packed and unpacked
// with PMPI_Pack/PMPI_Unpack. Ranks may pass different datatypes with the same type signature; each
// rank stages locally, so the path all ranks take stays the same (DESIGN.md rule 2).
#pragma once

#include <mpi.h>

#include <cstddef>

#include "common/slot_pool.h"

namespace overpass::shim {

// Whether elements of `type` lie back to back without holes, from the buffer's start: a buffer of
// them is its own contiguous stream.
bool denseType(MPI_Datatype type);

// Bytes of `count` elements of `type` as a contiguous stream (count x MPI_Type_size).
std::size_t packedBytes(int count, MPI_Datatype type);

// The shim's staging memory of a communicator (CommEngine::staging), by slot: the packed input
// and output of a call, and the copy that an in-place call works from.
enum class StagingSlot : std::size_t { kIn, kOut, kCopy, kCount };
class Staging {
 public:
  void* get(StagingSlot slot, std::size_t bytes) {
    return pool_.get(static_cast<std::size_t>(slot), bytes);
  }

 private:
  SlotPool<HeapMemory, static_cast<std::size_t>(StagingSlot::kCount)> pool_;
};

class StagedBuffer {
 public:
  // Returns an MPI error code.
  int init(const void* buf, std::size_t count, MPI_Datatype type, Staging& staging,
           StagingSlot slot);
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  bool staged() const { return staged_; }
  int pack() const;    // application buffer -> staging copy (no-op when not staged)
  int unpack() const;  // staging copy -> application buffer (no-op when not staged)

 private:
  int copy(bool toStaging) const;

  void* buf_ = nullptr;
  std::size_t count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Aint extent_ = 0;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool staged_ = false;
};

}  // namespace overpass::shim
