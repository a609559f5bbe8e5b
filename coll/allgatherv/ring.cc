// Allgatherv around a ring: as the allgather ring, with blocks of different sizes. In step s
// (1..p-1) rank r forwards block (r - s + 1) mod p to r + 1 and receives block (r - s) mod p from
// r - 1; every rank knows every block's size, so empty blocks are neither sent nor received.
// Cost: (p - 1) alpha + (N - n_r) beta, N = every block, n_r = the own block.
// Preconditions: none. Result: block q of rank q at recvbuf + recvBlocks.offset[q] on every rank.
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status allgathervRing(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const BlockLayout& b = args.recvBlocks;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  auto wrap = [&](int i) { return (i % size + size) % size; };
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  // Step 1 sends the own block straight from sendbuf; it is copied into place afterwards.
  for (int s = 1; s < size; ++s) {
    const int sent = wrap(rank - s + 1), received = wrap(rank - s);
    P2POp ops[2];
    int n = 0;
    if (b.bytes[received])
      ops[n++] = P2POp::recv(out + b.offset[received], b.bytes[received], left);
    if (b.bytes[sent])
      ops[n++] = P2POp::send(s == 1 ? args.sendbuf : out + b.offset[sent], b.bytes[sent], right);
    if (n) OVERPASS_CHECK(team.transport.exchange({ops, static_cast<std::size_t>(n)}, tag));
  }
  unsigned char* own = out + b.offset[rank];
  if (b.bytes[rank] && own != args.sendbuf) std::memcpy(own, args.sendbuf, b.bytes[rank]);
  return Status::kOk;
}

}  // namespace overpass
