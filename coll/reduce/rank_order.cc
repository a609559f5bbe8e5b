// Reduce in rank order: the rank-order reduce-scatter (coll/phases/rank_order_reduce_scatter.h),
// then every rank sends its finished block to the root. For deterministic mode.
//
// Steps: as allreduce rank_order, with a direct gather of the p blocks instead of the allgather.
// Cost: 2(p - 1) alpha + 2 (p - 1)/p n beta + (p - 1)/p n gamma (the root receives p - 1 blocks).
// Preconditions: none beyond a commutative operation; bits equal to every other rank-order
// algorithm's. Result: recvbuf at the root (other ranks' recvbuf may be null).
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/phases/rank_order_reduce_scatter.h"

namespace overpass {

Status reduceRankOrder(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const bool isRoot = rank == args.root;
  if (size == 1 || args.count == 0) {
    if (isRoot && args.sendbuf != args.recvbuf && args.bytes)
      std::memmove(args.recvbuf, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  const BlockSplit blocks(args, size);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  void* block = isRoot ? out + blocks.offset(rank)
                       : team.scratch.get(ScratchSlot::kPartial, blocks.bytes(rank));
  OVERPASS_CHECK(rankOrderReduceScatter(args, team, blocks, args.sendbuf, block));
  if (!isRoot) return team.transport.send(block, blocks.bytes(rank), args.root, tag);
  std::vector<P2POp> ops;
  ops.reserve(size - 1);
  for (int q = 0; q < size; ++q)
    if (q != rank) ops.push_back(P2POp::recv(out + blocks.offset(q), blocks.bytes(q), q));
  return team.transport.exchange(ops, tag);
}

}  // namespace overpass
