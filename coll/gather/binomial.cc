// Gather along a binomial tree towards `root`.
//
// Steps: in ranks relative to the root (v = (rank - root) mod p), the subtree of rank v is
// v .. v + lowbit(v) - 1 (clipped to p) and its blocks travel contiguous in relative order.
// Rank v posts the receives of the blocks of v + m .. v + 2m - 1 from v + m for every power of
// two m below lowbit(v) at once (into a scratch buffer, in relative order), copies its own block
// in while they are in flight, then sends the whole subtree to v - lowbit(v); a leaf sends its
// block straight from sendbuf. The root receives into recvbuf, which is in rank order: the one
// subtree whose ranks wrap past p - 1 arrives as two messages of one batch (no rotated copy of
// the whole buffer).
// Cost: ceil(log2 p) alpha + (p - 1) n beta (the root receives (p - 1) n bytes), n = one block;
// plus the forwarding of the largest subtree (p/2 blocks) on the critical path: ~(p - 1 + p/2) n
// beta. Measured at np 4 (docs/PERFORMANCE.md): slower than linear once a block is a few KiB.
// Preconditions: none. Uses scratch slot kBlocks (subtree blocks of intermediate ranks).
// Result: block i of rank i at recvbuf + i * bytes on the root (in place: sendbuf is the root's
// block of recvbuf).
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/math/binomial_tree.h"

namespace overpass {

Status gatherBinomial(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const BinomialSubtree tree(rank, args.root, size);
  const int v = tree.v, mask = tree.mask, span = tree.span;
  const int parent = v == 0 ? rank : tree.parent();
  if (v != 0 && span == 1) return team.transport.send(args.sendbuf, n, parent, tag);

  // Where the blocks of the subtree go: recvbuf in rank order at the root, scratch in relative
  // order elsewhere.
  auto* blocks = static_cast<unsigned char*>(
      v == 0 ? args.recvbuf : team.scratch.get(ScratchSlot::kBlocks, span * n));
  void* own = v == 0 ? blocks + static_cast<std::size_t>(rank) * n : blocks;
  std::vector<P2POp> ops;
  ops.reserve(33);  // a receive per tree level, one more for a subtree that wraps
  for (int m = 1; m < mask && v + m < size; m <<= 1) {
    const int child = tree.absolute(v + m), count = std::min(2 * m, span) - m;
    if (v != 0) {
      ops.push_back(P2POp::recv(blocks + m * n, count * n, child));
      continue;
    }
    // Team ranks child .. child + count - 1, mod p.
    const int head = tree.beforeWrap(v + m, count);
    ops.push_back(P2POp::recv(blocks + static_cast<std::size_t>(child) * n, head * n, child));
    if (head < count)
      ops.push_back(P2POp::recv(blocks, static_cast<std::size_t>(count - head) * n, child));
  }
  Transport::Request request;
  if (!ops.empty()) OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  if (own != args.sendbuf) std::memcpy(own, args.sendbuf, n);
  if (!ops.empty()) OVERPASS_CHECK(team.transport.wait(request));
  if (v == 0) return Status::kOk;

  // A child of the root whose subtree wraps past team rank p - 1 sends it in two messages.
  const int head = v == mask ? tree.beforeWrap(v, span) : span;
  const P2POp out[2] = {
      P2POp::send(blocks, head * n, parent),
      P2POp::send(blocks + head * n, static_cast<std::size_t>(span - head) * n, parent)};
  return team.transport.exchange({out, head < span ? 2u : 1u}, tag);
}

}  // namespace overpass
