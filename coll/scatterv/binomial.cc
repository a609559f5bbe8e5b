// Scatterv along a binomial tree rooted at `root`, as the binomial scatter
// (coll/scatter/binomial.cc), where only the root knows the blocks' sizes.
//
// Steps: in ranks relative to the root (v = (rank - root) mod p), the subtree of rank v is
// v .. v + span - 1 and its children are v + m for the powers of two m below lowbit(v)
// (coll/math/binomial_tree.h). An edge to a child with a subtree of two or more ranks carries a
// header, the sizes of the child's subtree blocks in relative order (one uint64 each: both sides
// know the child's span, so both know the header's size), then the subtree's blocks packed in
// that order (no message where they add up to 0 bytes, which both sides then know); a leaf gets
// its block alone (it knows its size: no header, and no message for an empty block). The root
// sends every child, largest subtree first, its header and its blocks in one batch, each run of
// blocks straight from sendbuf where sendBlocks holds it back to back in relative order
// (coll/math/block_runs.h: the usual displacements, unless the subtree wraps past rank p - 1),
// else packed into scratch first, and copies its own block meanwhile. Rank v > 0 with children
// receives its header, then its subtree's blocks into scratch, sends each child its header and
// its sub-range (largest first, one batch) and copies its own block out meanwhile; a leaf
// receives its block straight into recvbuf.
// Cost: about 2 ceil(log2 p) alpha (a header, then the blocks, per level) + the root's N - n_root
// bytes beta, N the bytes of all blocks, plus the forwarding of the largest subtree's blocks on
// the critical path (~N/2 more); the root sends ceil(log2 p) messages of blocks instead of p - 1.
// Preconditions: none. Uses scratch slots kSizes (headers) and kBlocks (an intermediate
// rank's subtree blocks; the root's packed runs).
// Result: block q of the root's sendbuf (sendBlocks) in recvbuf of rank q (in place at the root:
// recvbuf is the root's block of sendbuf and is left alone).
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

// The root: every child's header and blocks in one batch, largest subtree first.
Status scatterFromRoot(const CollArgs& args, Team& team, const BinomialSubtree& tree, int tag) {
  const int size = team.size(), rank = team.rank();
  const BlockLayout& b = args.sendBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* sizes = static_cast<std::uint64_t*>(
      team.scratch.get(ScratchSlot::kSizes, static_cast<std::size_t>(size) * kSizeBytes));
  for (int u = 0; u < size; ++u) sizes[u] = b.bytes[tree.absolute(u)];
  std::size_t staged = 0;
  for (int m = tree.mask >> 1; m > 0; m >>= 1) {
    const int count = std::min(2 * m, size) - m;
    if (!backToBack(b, count, [&tree, m](int i) { return tree.absolute(m + i); }))
      staged += sumOf(sizes + m, count);
  }
  auto* staging = staged
                      ? static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, staged))
                      : nullptr;
  std::array<P2POp, 2 * kMaxChildren> ops;
  std::size_t posted = 0, at = 0;
  for (int m = tree.mask >> 1; m > 0; m >>= 1) {
    const int count = std::min(2 * m, size) - m, child = tree.absolute(m);
    if (count > 1) ops[posted++] = P2POp::send(sizes + m, count * kSizeBytes, child);
    const std::size_t bytes = sumOf(sizes + m, count);
    if (bytes == 0) continue;
    const auto run = backToBack(b, count, [&tree, m](int i) { return tree.absolute(m + i); });
    if (run) {
      ops[posted++] = P2POp::send(in + *run, bytes, child);
      continue;
    }
    ops[posted++] = P2POp::send(staging + at, bytes, child);
    for (int u = m; u < m + count; ++u) {
      const int q = tree.absolute(u);
      if (b.bytes[q]) std::memcpy(staging + at, in + b.offset[q], b.bytes[q]);
      at += b.bytes[q];
    }
  }
  Transport::Request request;
  if (posted) OVERPASS_CHECK(team.transport.start({ops.data(), posted}, tag, &request));
  const unsigned char* own = in + b.offset[rank];
  if (b.bytes[rank] && own != args.recvbuf) std::memcpy(args.recvbuf, own, b.bytes[rank]);
  return posted ? team.transport.wait(request) : Status::kOk;
}

}  // namespace

Status scattervBinomial(const CollArgs& args, Team& team) {
  const int size = team.size(), tag = static_cast<int>(args.coll);
  const BinomialSubtree tree(team.rank(), args.root, size);
  if (tree.v == 0) return scatterFromRoot(args, team, tree, tag);
  const int parent = tree.parent(), span = tree.span;
  if (span == 1)
    return args.bytes ? team.transport.recv(args.recvbuf, args.bytes, parent, tag) : Status::kOk;

  // sizes[u]: the block of relative rank v + u; then the blocks, packed in that order.
  auto* sizes = static_cast<std::uint64_t*>(
      team.scratch.get(ScratchSlot::kSizes, static_cast<std::size_t>(span) * kSizeBytes));
  OVERPASS_CHECK(team.transport.recv(sizes, span * kSizeBytes, parent, tag));
  const std::size_t total = sumOf(sizes, span);
  auto* blocks = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, total));
  if (total) OVERPASS_CHECK(team.transport.recv(blocks, total, parent, tag));

  std::array<P2POp, 2 * kMaxChildren> ops;
  std::size_t posted = 0;
  for (int m = tree.mask >> 1; m > 0; m >>= 1) {
    if (m >= span) continue;
    const int count = std::min(2 * m, span) - m, child = tree.absolute(tree.v + m);
    if (count > 1) ops[posted++] = P2POp::send(sizes + m, count * kSizeBytes, child);
    const std::size_t bytes = sumOf(sizes + m, count);
    if (bytes) ops[posted++] = P2POp::send(blocks + sumOf(sizes, m), bytes, child);
  }
  Transport::Request request;
  if (posted) OVERPASS_CHECK(team.transport.start({ops.data(), posted}, tag, &request));
  // The own block's size as the header says it (MPI: the same as this rank's receive count).
  const std::size_t own = std::min<std::size_t>(args.bytes, sizes[0]);
  if (own) std::memcpy(args.recvbuf, blocks, own);
  return posted ? team.transport.wait(request) : Status::kOk;
}

}  // namespace overpass
