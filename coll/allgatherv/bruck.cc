// Allgatherv by Bruck's algorithm with blocks of different sizes: rank r keeps a working copy of
// the blocks in rotated order (its own first, then r + 1, r + 2, ...), back to back. In step k
// (distance d = 2^k) it sends its first min(d, p - d) blocks to r - d and receives as many from
// r + d, which are its blocks r + d, r + d + 1, ...: they land right after the ones it has.
// After ceil(log2 p) steps every block is copied to its place. Every rank knows every block.
// Cost: ceil(log2 p) alpha + (N - n_r) beta + 2 N copies.
// Preconditions: none. Result: block q of rank q at recvbuf + recvBlocks.offset[q] on every rank.
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"

namespace overpass {

Status allgathervBruck(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const BlockLayout& b = args.recvBlocks;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  auto wrap = [&](int i) { return (i % size + size) % size; };
  // at[i]: where the i-th block of the rotated order (block r + i) starts in the working copy.
  std::vector<std::size_t> at(static_cast<std::size_t>(size) + 1, 0);
  for (int i = 0; i < size; ++i) at[i + 1] = at[i] + b.bytes[wrap(rank + i)];
  auto* work = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, at[size]));
  if (b.bytes[rank]) std::memcpy(work, args.sendbuf, b.bytes[rank]);
  for (int d = 1; d < size; d *= 2) {
    const int blocks = std::min(d, size - d);
    // To r - d: blocks r .. r + blocks - 1, positions [0, blocks) of this rank's order. From
    // r + d: its blocks r + d .., positions [d, d + blocks) here.
    const std::size_t sent = at[blocks], received = at[d + blocks] - at[d];
    P2POp ops[2];
    int n = 0;
    if (received) ops[n++] = P2POp::recv(work + at[d], received, wrap(rank + d));
    if (sent) ops[n++] = P2POp::send(work, sent, wrap(rank - d));
    if (n) OVERPASS_CHECK(team.transport.exchange({ops, static_cast<std::size_t>(n)}, tag));
  }
  for (int i = 0; i < size; ++i) {
    const int q = wrap(rank + i);
    unsigned char* to = out + b.offset[q];
    if (b.bytes[q] && !(q == rank && to == args.sendbuf)) std::memcpy(to, work + at[i], b.bytes[q]);
  }
  return Status::kOk;
}

}  // namespace overpass
