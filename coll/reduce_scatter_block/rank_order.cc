// Reduce_scatter_block in rank order: the rank-order reduce-scatter
// (coll/phases/rank_order_reduce_scatter.h) over blocks of `count` elements. For deterministic
// mode.
//
// Cost: (p - 1) alpha + (p - 1) n beta + (p - 1) n gamma, n = one block: one round, all messages
// in flight together.
// Preconditions: none beyond a commutative operation; bits equal to every other rank-order
// algorithm's. Result: block r at rank r's recvbuf.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/rank_order_reduce_scatter.h"

namespace overpass {

Status reduceScatterBlockRankOrder(const CollArgs& args, Team& team) {
  if (args.count == 0) return Status::kOk;
  CollArgs whole = args;  // the input vector: p blocks of `count`
  whole.count = args.count * team.size();
  whole.bytes = args.bytes * team.size();
  return rankOrderReduceScatter(whole, team, BlockSplit(whole, team.size()), args.sendbuf,
                                args.recvbuf);
}

}  // namespace overpass
