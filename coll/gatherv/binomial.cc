// Gatherv along a binomial tree towards `root`, as the binomial gather (coll/gather/binomial.cc),
// where only the root knows the blocks' sizes.
//
// Steps: in ranks relative to the root (v = (rank - root) mod p), the subtree of rank v is
// v .. v + span - 1 and its children are v + m for the powers of two m below lowbit(v)
// (coll/math/binomial_tree.h). Every edge carries a header, the sizes of the child's subtree
// blocks in relative order (one uint64 each: the parent knows the child's span, so it knows the
// header's size), then the subtree's blocks packed in that order (the parent now knows their
// size; no message where they add up to 0 bytes, which both sides know). A leaf sends its header
// and its block at once. Rank v > 0 with children receives their headers (posted together), then
// sends its own header (its block's size, then theirs) to its parent while it receives the
// children's blocks into scratch behind its own block, which it copies in meanwhile, then sends
// the whole subtree. The root knows every size: it posts every child's header and blocks at
// once (the headers are not needed there, but every edge carries one), each child's blocks
// straight into recvbuf where recvBlocks holds them back to back in relative order
// (coll/math/block_runs.h: the usual displacements, unless the subtree wraps past rank p - 1),
// else into scratch, copied to their places once they are in.
// Cost: about 2 ceil(log2 p) alpha (a header round, then the blocks, per level; the headers climb
// ahead of the blocks) + the root's N - n_root bytes beta, N the bytes of all blocks, plus the
// forwarding of the largest subtree's blocks on the critical path (~N/2 more); the root receives
// ceil(log2 p) messages of blocks instead of p - 1.
// Preconditions: none. Uses scratch slots kSizes (headers) and kBlocks (an intermediate
// rank's subtree blocks; the root's runs that are not in place).
// Result: block q of rank q at recvbuf + recvBlocks.offset[q] at the root (in place: sendbuf is
// the root's block of recvbuf).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

#include "coll/algorithms.h"
#include "coll/math/binomial_tree.h"
#include "coll/math/block_runs.h"

namespace overpass {
namespace {

constexpr std::size_t kSizeBytes = sizeof(std::uint64_t);
constexpr int kMaxChildren = 32;  // one per tree level: p < 2^31

// The root: every child's header and blocks in one batch.
Status gatherAtRoot(const CollArgs& args, Team& team, const BinomialSubtree& tree, int tag) {
  const int size = team.size(), rank = team.rank();
  const BlockLayout& b = args.recvBlocks;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  struct Child {
    int m, count;
    std::size_t bytes;
    std::optional<std::ptrdiff_t> at;  // where the run lies in recvbuf; none: in scratch
  };
  std::array<Child, kMaxChildren> children;
  int n = 0;
  std::size_t staged = 0;
  for (int m = 1; m < size; m <<= 1) {
    const int count = std::min(2 * m, size) - m;
    auto rankOf = [&tree, m](int i) { return tree.absolute(m + i); };
    Child& c = children[n++];
    c = {m, count, runBytes(b, count, rankOf), backToBack(b, count, rankOf)};
    if (!c.at) staged += c.bytes;
  }
  auto* headers = static_cast<std::uint64_t*>(
      team.scratch.get(ScratchSlot::kSizes, static_cast<std::size_t>(size) * kSizeBytes));
  auto* staging = staged
                      ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, staged))
                      : nullptr;
  std::array<P2POp, 2 * kMaxChildren> ops;
  std::size_t posted = 0, at = 0;
  for (int i = 0; i < n; ++i) {
    const Child& c = children[i];
    const int child = tree.absolute(c.m);
    ops[posted++] = P2POp::recv(headers + c.m, c.count * kSizeBytes, child);
    if (c.bytes == 0) continue;
    ops[posted++] = P2POp::recv(c.at ? out + *c.at : staging + at, c.bytes, child);
    if (!c.at) at += c.bytes;
  }
  Transport::Request request;
  if (posted) OVERPASS_CHECK(team.transport.start({ops.data(), posted}, tag, &request));
  unsigned char* own = out + b.offset[rank];
  if (b.bytes[rank] && own != args.sendbuf) std::memcpy(own, args.sendbuf, b.bytes[rank]);
  if (posted) OVERPASS_CHECK(team.transport.wait(request));
  at = 0;
  for (int i = 0; i < n; ++i) {
    const Child& c = children[i];
    if (c.at) continue;
    for (int u = c.m; u < c.m + c.count; ++u) {
      const int q = tree.absolute(u);
      if (b.bytes[q]) std::memcpy(out + b.offset[q], staging + at, b.bytes[q]);
      at += b.bytes[q];
    }
  }
  return Status::kOk;
}

}  // namespace

Status gathervBinomial(const CollArgs& args, Team& team) {
  const int size = team.size(), tag = static_cast<int>(args.coll);
  const BinomialSubtree tree(team.rank(), args.root, size);
  if (tree.v == 0) return gatherAtRoot(args, team, tree, tag);
  const int parent = tree.parent(), span = tree.span;
  const std::uint64_t mine = args.bytes;
  if (span == 1) {
    const P2POp out[2] = {P2POp::send(&mine, kSizeBytes, parent),
                          P2POp::send(args.sendbuf, args.bytes, parent)};
    return team.transport.exchange({out, args.bytes ? 2u : 1u}, tag);
  }

  // The children's headers: sizes[u] for relative ranks v + u of the subtree.
  auto* sizes = static_cast<std::uint64_t*>(
      team.scratch.get(ScratchSlot::kSizes, static_cast<std::size_t>(span) * kSizeBytes));
  sizes[0] = mine;
  std::array<P2POp, kMaxChildren + 1> ops;
  std::size_t posted = 0;
  for (int m = 1; m < span; m <<= 1)
    ops[posted++] =
        P2POp::recv(sizes + m, (std::min(2 * m, span) - m) * kSizeBytes, tree.absolute(tree.v + m));
  OVERPASS_CHECK(team.transport.exchange({ops.data(), posted}, tag));

  // Up goes the header while the children's blocks come in behind the own one.
  const std::size_t total = sumOf(sizes, span);
  auto* blocks = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, total));
  posted = 0;
  ops[posted++] = P2POp::send(sizes, span * kSizeBytes, parent);
  std::size_t at = args.bytes;
  for (int m = 1; m < span; m <<= 1) {
    const std::size_t bytes = sumOf(sizes + m, std::min(2 * m, span) - m);
    if (bytes) ops[posted++] = P2POp::recv(blocks + at, bytes, tree.absolute(tree.v + m));
    at += bytes;
  }
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start({ops.data(), posted}, tag, &request));
  if (args.bytes) std::memcpy(blocks, args.sendbuf, args.bytes);
  OVERPASS_CHECK(team.transport.wait(request));
  return total ? team.transport.send(blocks, total, parent, tag) : Status::kOk;
}

}  // namespace overpass
