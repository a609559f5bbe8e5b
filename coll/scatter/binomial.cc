// Scatter along a binomial tree rooted at `root`.
//
// Steps: in ranks relative to the root (v = (rank - root) mod p), the subtree of rank v is
// v .. v + lowbit(v) - 1 (clipped to p) and its blocks travel contiguous in relative order.
// Rank v > 0 receives its subtree's blocks from v - lowbit(v) (into a scratch buffer, or straight
// into recvbuf for a leaf), then sends the blocks of v + m .. v + 2m - 1 to v + m for every power
// of two m below lowbit(v), largest first, and copies its own block out while the first send is
// in flight. The root sends from sendbuf, which is in rank order: the one subtree whose ranks
// wrap past p - 1 goes as two messages of one batch (no rotated copy of the whole buffer).
// Cost: ceil(log2 p) alpha + (p - 1) n beta (the root sends (p - 1) n bytes, a halving sequence
// of subtrees), n = one block; plus the forwarding of the largest subtree (p/2 blocks) on the
// critical path: ~(p - 1 + p/2) n beta.
// Measured at np 4 (docs/PERFORMANCE.md): slower than linear once a block is a few KiB.
// Preconditions: none. Uses scratch slot kBlocks (subtree blocks of intermediate ranks).
// Result: block i of the root's sendbuf in recvbuf of rank i (in place at the root: recvbuf is
// the root's block of sendbuf and is left alone).
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/math/binomial_tree.h"

namespace overpass {

Status scatterBinomial(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const BinomialSubtree tree(rank, args.root, size);

  if (tree.v == 0) {
    const auto* in = static_cast<const unsigned char*>(args.sendbuf);
    const void* own = in + static_cast<std::size_t>(rank) * n;
    bool copied = own == args.recvbuf;
    for (int m = tree.mask >> 1; m > 0; m >>= 1) {
      // Relative ranks m .. m + count - 1 are team ranks first .. first + count - 1, mod p.
      const int first = tree.absolute(m), count = std::min(2 * m, size) - m;
      const int head = tree.beforeWrap(m, count);
      const P2POp ops[2] = {P2POp::send(in + static_cast<std::size_t>(first) * n, head * n, first),
                            P2POp::send(in, static_cast<std::size_t>(count - head) * n, first)};
      Transport::Request request;
      OVERPASS_CHECK(team.transport.start({ops, head < count ? 2u : 1u}, tag, &request));
      if (!copied) std::memcpy(args.recvbuf, own, n);
      copied = true;
      OVERPASS_CHECK(team.transport.wait(request));
    }
    if (!copied) std::memcpy(args.recvbuf, own, n);
    return Status::kOk;
  }

  const int span = tree.span, parent = tree.parent();
  if (span == 1) return team.transport.recv(args.recvbuf, n, parent, tag);
  auto* blocks = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, span * n));
  // A child of the root whose subtree wraps past team rank p - 1 gets it in two messages.
  const int head = tree.v == tree.mask ? tree.beforeWrap(tree.v, span) : span;
  const P2POp in[2] = {
      P2POp::recv(blocks, head * n, parent),
      P2POp::recv(blocks + head * n, static_cast<std::size_t>(span - head) * n, parent)};
  OVERPASS_CHECK(team.transport.exchange({in, head < span ? 2u : 1u}, tag));
  bool copied = false;
  for (int m = tree.mask >> 1; m > 0; m >>= 1) {
    if (tree.v + m >= size) continue;
    const int end = std::min(2 * m, span);
    Transport::Request request;
    const P2POp out = P2POp::send(blocks + m * n, (end - m) * n, tree.absolute(tree.v + m));
    OVERPASS_CHECK(team.transport.start({&out, 1}, tag, &request));
    if (!copied) std::memcpy(args.recvbuf, blocks, n);
    copied = true;
    OVERPASS_CHECK(team.transport.wait(request));
  }
  if (!copied) std::memcpy(args.recvbuf, blocks, n);
  return Status::kOk;
}

}  // namespace overpass
