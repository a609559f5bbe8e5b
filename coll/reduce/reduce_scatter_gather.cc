// Reduce by ring reduce-scatter then binomial gather of the reduced blocks (Rabenseifner's
// composition with a ring), for large vectors.
//
// Steps: 1. the ring reduce-scatter of coll/phases/ring_reduce_scatter.h into a work vector (the
// root's recvbuf, a scratch vector elsewhere): afterwards block r (blocks indexed by team rank,
// sizes differing by at most one element) of rank r's work vector is reduced over all ranks. 2.
// Binomial gather towards the root in ranks relative to it (v = (rank - root) mod p): rank v
// receives the finished blocks of ranks v + m .. v + 2m - 1 from v + m for every power of two m
// below lowbit(v) (all receives posted at once), straight into place in its work vector, then sends
// the blocks of its subtree v .. v + lowbit(v) - 1 to v - lowbit(v). A subtree's blocks are those
// of consecutive team ranks, contiguous in the vector unless they wrap past rank p - 1: then they
// travel as two messages of the same batch.
// Cost: reduce-scatter (p - 1) x (alpha + n/p beta + n/p gamma), gather ceil(log2 p) alpha +
// (p-1)/p n beta: (p - 1 + ceil(log2 p)) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma at the root,
// against ceil(log2 p) (alpha + n beta + n gamma) for the binomial tree. Unlike the tree, every
// rank takes part until the end of the reduce-scatter.
// Preconditions: a commutative operation. Serves count >= p (with fewer elements some blocks are
// empty; still correct). Uses scratch slots kPhaseIncoming (the ring's incoming block) and
// kPartial (the work vector of non-roots). Result: recvbuf at the root (which may be sendbuf: in
// place); other ranks' recvbuf is not touched (it may be null).
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/phases/ring_reduce_scatter.h"

namespace overpass {

Status reduceReduceScatterGather(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const bool isRoot = rank == args.root;
  if (size == 1 || args.count == 0) {
    if (isRoot && args.sendbuf != args.recvbuf && args.bytes)
      std::memmove(args.recvbuf, args.sendbuf, args.bytes);
    return Status::kOk;
  }
  auto* work = static_cast<unsigned char*>(
      isRoot ? args.recvbuf : team.scratch.get(ScratchSlot::kPartial, args.bytes));
  const BlockSplit blocks(args, size);
  OVERPASS_CHECK(ringReduceScatter(args, team, blocks, args.sendbuf, work));

  // The blocks of relative ranks [a, b) (0 < a < b <= p) as one or two operations with `peer`.
  const int v = (rank - args.root + size) % size;
  std::vector<P2POp> ops;
  ops.reserve(33);  // a receive per tree level, one more for a subtree that wraps
  auto addRange = [&](P2POp::Kind kind, int a, int b, int peer) {
    const int first = (a + args.root) % size, last = (b - 1 + args.root) % size;
    auto add = [&](int from, int to) {  // team ranks from..to, to >= from
      const std::size_t begin = blocks.offset(from), end = blocks.offset(to) + blocks.bytes(to);
      ops.push_back({kind, work + begin, end - begin, peer});
    };
    if (first <= last) {
      add(first, last);
    } else {
      add(first, size - 1);
      add(0, last);
    }
  };
  int mask = 1;
  while (mask < size && !(v & mask)) mask <<= 1;
  for (int m = 1; m < mask && v + m < size; m <<= 1)
    addRange(P2POp::Kind::kRecv, v + m, std::min(v + 2 * m, size), (rank + m) % size);
  if (!ops.empty()) OVERPASS_CHECK(team.transport.exchange(ops, tag));
  if (v == 0) return Status::kOk;
  ops.clear();
  addRange(P2POp::Kind::kSend, v, std::min(v + mask, size), (rank - mask + size) % size);
  return team.transport.exchange(ops, tag);
}

}  // namespace overpass
