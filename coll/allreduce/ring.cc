// Allreduce around a ring: reduce-scatter (coll/ring_reduce_scatter.h), then allgather.
//
// Steps: after the reduce-scatter, rank r holds block r reduced over all ranks; p - 1 more steps
// pass the finished blocks around the ring (rank r sends block (r - k) mod p to r + 1 and
// receives block (r - k - 1) mod p from r - 1).
// Cost: 2(p - 1) x (alpha + n/p beta) + (p - 1)/p n gamma: bandwidth-optimal, latency linear in
// p, so for large vectors.
// Preconditions: a commutative operation. Every block is reduced on one rank and then copied, so
// every rank ends with bitwise the same vector. Result: recvbuf on every rank.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/ring_reduce_scatter.h"

namespace overpass {

Status allreduceRing(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && args.bytes) std::memmove(out, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  const RingBlocks blocks(args, size);
  OVERPASS_CHECK(ringReduceScatter(args, team, blocks, args.sendbuf, out));
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int k = 0; k < size - 1; ++k) {
    const int sendBlock = blocks.wrap(rank - k), recvBlock = blocks.wrap(rank - k - 1);
    OVERPASS_CHECK(team.transport.sendrecv(out + blocks.offset(sendBlock), blocks.bytes(sendBlock),
                                           right, out + blocks.offset(recvBlock),
                                           blocks.bytes(recvBlock), left, tag));
  }
  return Status::kOk;
}

}  // namespace overpass
