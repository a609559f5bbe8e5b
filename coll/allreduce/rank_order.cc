// Allreduce in rank order: the rank-order reduce-scatter (coll/phases/rank_order_reduce_scatter.h),
// then a ring allgather (coll/phases/ring_allgather.h). For deterministic mode at medium and large
// sizes.
//
// Steps: every rank receives block r of every other rank at once and combines the p
// contributions in rank order; the finished blocks then go around the ring.
// Cost: 2(p - 1) alpha + 2 (p - 1)/p n beta + (p - 1)/p n gamma, as the ring.
// Preconditions: none beyond a commutative operation; every element is combined in rank order,
// so the bits equal those of every other rank-order algorithm and do not depend on the block
// split. Result: recvbuf on every rank, bitwise identical.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/rank_order_reduce_scatter.h"
#include "coll/phases/ring_allgather.h"

namespace overpass {

Status allreduceRankOrder(const CollArgs& args, Team& team) {
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (team.size() == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && args.bytes) std::memmove(out, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  const BlockSplit blocks(args, team.size());
  OVERPASS_CHECK(
      rankOrderReduceScatter(args, team, blocks, args.sendbuf, out + blocks.offset(team.rank())));
  return ringAllgather(args, team, blocks, out);
}

}  // namespace overpass
