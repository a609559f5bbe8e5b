// The arguments of one collective call as the algorithms see them: contiguous bytes, Overpass
// types, team ranks. The shim builds them from the MPI arguments (packing non-contiguous data and
// resolving MPI_IN_PLACE), so algorithms never see MPI handles.
#pragma once

#include <cstddef>

#include "common/collective.h"
#include "common/datatype.h"

namespace overpass {

// Where the data is, per collective (p = team size, `bytes` = one block):
//   allreduce            sendbuf: count elements -> recvbuf: count elements
//   reduce               sendbuf -> recvbuf at root (recvbuf may be null elsewhere)
//   reduce_scatter_block sendbuf: p * count elements -> recvbuf: count elements (no overlap)
//   bcast                recvbuf: `bytes` on every rank, the root's is the source
//   gather               sendbuf: bytes -> recvbuf at root: p * bytes
//   scatter              sendbuf at root: p * bytes -> recvbuf: bytes
//   allgather            sendbuf: bytes -> recvbuf: p * bytes
//   alltoall             sendbuf: p * bytes -> recvbuf: p * bytes (no overlap)
//   allgatherv           sendbuf: recvBlocks.bytes[rank] -> recvbuf: recvBlocks on every rank
//   gatherv              sendbuf: `bytes` -> recvbuf at root: recvBlocks (null elsewhere)
//   scatterv             sendbuf at root: sendBlocks (null elsewhere) -> recvbuf: `bytes`
//   alltoallv            sendbuf: sendBlocks (block q: to rank q) -> recvbuf: recvBlocks (block
//                        q: from rank q); each rank knows its own counts only
//   reduce_scatter       sendbuf: count elements, rank q's block at recvBlocks.offset[q] ->
//                        recvbuf: recvBlocks.bytes[rank] (every rank knows every block)
//   scan, exscan         sendbuf: count elements -> recvbuf: count elements (exscan: not rank 0)
// In-place calls arrive with sendbuf pointing into recvbuf at the rank's own position (or the
// reverse for scatter): an algorithm copies its own block only when the two pointers differ.

// Blocks of different sizes in one buffer, one per rank: rank q's bytes[q] bytes at byte offset
// offset[q] from the buffer's pointer, in any order, with gaps, negative where the application's
// displacement is. Blocks that are written never overlap; blocks that are only read may.
struct BlockLayout {
  const std::size_t* bytes = nullptr;
  const std::ptrdiff_t* offset = nullptr;
};

struct CollArgs {
  Collective coll = Collective::kBarrier;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::size_t bytes = 0;  // block bytes; for reductions count * dataTypeSize(type)
  std::size_t count = 0;  // elements, for reductions
  DataType type = DataType::kByte;
  ReduceOp op = ReduceOp::kSum;
  const UserReduce* user = nullptr;  // for ReduceOp::kUser
  int root = 0;
  BlockLayout sendBlocks, recvBlocks;  // the vector collectives (above)
  // Every significant buffer of this rank lies in device memory (the shim classifies a call's
  // buffers once): what a device algorithm (coll/device/device_ipc.h) offers its peers.
  bool onDevice = false;
};

}  // namespace overpass
