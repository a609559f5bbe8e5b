// A contiguous view of `count` elements of an MPI datatype: the application's buffer itself when
// the type is dense (no holes, starts at the buffer), otherwise a staging copy packed and unpacked
// with PMPI_Pack/PMPI_Unpack. Ranks may pass different datatypes with the same type signature; each
// rank stages locally, so the path all ranks take stays the same (DESIGN.md rule 2).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "coll/coll_args.h"

#include "common/slot_pool.h"

namespace overpass::shim {

// Whether elements of `type` lie back to back without holes, from the buffer's start: a buffer of
// them is its own contiguous stream.
bool denseType(MPI_Datatype type);

// Bytes of `count` elements of `type` as a contiguous stream (count x MPI_Type_size).
std::size_t packedBytes(int count, MPI_Datatype type);

// The shim's staging memory of a communicator (CommEngine::staging), by slot: the packed input
// and output of a call, and the copy that an in-place call works from.
// kFusionIn, kFusionOut: the packed inputs and results of a fused group of nonblocking allreduces
// (shim/dispatch.cc, OVERPASS_FUSION).
enum class StagingSlot : std::size_t { kIn, kOut, kCopy, kFusionIn, kFusionOut, kCount };
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

// The p blocks of one side of a vector collective as the algorithms see them
// (coll/coll_args.h, BlockLayout): the application's buffer itself where the datatype is dense
// (each block at its displacement times the extent), otherwise a staging copy holding the blocks
// back to back, packed and unpacked block by block.
class StagedBlocks {
 public:
  // `counts` and `displs`: p entries, in extents of `type`; `copy`: a staging copy also where
  // the type is dense (an input that the call overwrites). Returns an MPI error code.
  int init(const void* buf, const int* counts, const int* displs, int p, MPI_Datatype type,
           Staging& staging, StagingSlot slot, bool copy = false);
  void* data() const { return data_; }
  BlockLayout layout() const { return {bytes_.data(), offset_.data()}; }
  std::size_t bytes(int q) const { return bytes_[static_cast<std::size_t>(q)]; }
  char* block(int q) const {
    return static_cast<char*>(data_) + offset_[static_cast<std::size_t>(q)];
  }
  int pack(int q) const { return copy(q, true); }  // no-ops when not staged
  int unpack(int q) const { return copy(q, false); }
  int packAll() const;

 private:
  int copy(int q, bool toStaging) const;

  void* buf_ = nullptr;
  const int* counts_ = nullptr;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Aint extent_ = 0;
  void* data_ = nullptr;
  bool staged_ = false;
  std::vector<std::size_t> bytes_;
  std::vector<std::ptrdiff_t> offset_, typed_;  // in the view; in the application's buffer
};

// `count` elements of `type` (extent `extent`) at `typed` to or from their packed stream at
// `packed`, through PMPI_Pack/PMPI_Unpack. Returns an MPI error code.
int packElements(void* typed, std::size_t count, MPI_Datatype type, MPI_Aint extent, void* packed,
                 bool toPacked);

}  // namespace overpass::shim
