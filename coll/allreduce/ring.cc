// Allreduce around a ring: reduce-scatter (coll/phases/ring_reduce_scatter.h), then allgather
// (coll/phases/ring_allgather.h).
//
// Steps: after the reduce-scatter, rank r holds block r reduced over all ranks; p - 1 more steps
// pass the finished blocks around the ring.
// Cost: 2(p - 1) x (alpha + n/p beta) + (p - 1)/p n gamma: bandwidth-optimal, latency linear in
// p, so for large vectors.
// Preconditions: a commutative operation. Every block is reduced on one rank and then copied, so
// every rank ends with bitwise the same vector. Result: recvbuf on every rank.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/ring_allgather.h"
#include "coll/phases/ring_reduce_scatter.h"

namespace overpass {

Status allreduceRing(const CollArgs& args, Team& team) {
  const int size = team.size();
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && args.bytes) std::memmove(out, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  const BlockSplit blocks(args, size);
  OVERPASS_CHECK(ringReduceScatter(args, team, blocks, args.sendbuf, out));
  return ringAllgather(args, team, blocks, out);
}

}  // namespace overpass
