// Allgather by Bruck's algorithm, for any p.
//
// Steps: rank r starts with its own block; at distance d = 1, 2, 4, ... (ceil(log2 p) steps) it
// sends the min(d, p - d) blocks it holds, r .. r + min(d, p - d) - 1 (mod p), to r - d and
// receives blocks r + d .. from r + d, so that it holds blocks r .. r + min(2d, p) - 1. The
// final rotation of the textbook version is folded into the addressing: every block is sent
// from and received into its final place in recvbuf; a run of blocks that wraps past block p - 1
// travels as two messages, split at the same block on both sides.
// Cost: ceil(log2 p) alpha + (p - 1) n beta, n = one block.
// Preconditions: none. Result: block i of rank i at recvbuf + i * bytes on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status allgatherBruck(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  auto* own = out + static_cast<std::size_t>(rank) * n;
  if (n == 0) return Status::kOk;
  bool copyPending = args.sendbuf != own;
  for (int dist = 1; dist < size; dist *= 2) {
    const int blocks = std::min(dist, size - dist);
    const int to = (rank - dist + size) % size, from = (rank + dist) % size;
    P2POp ops[4];
    int count = 0;
    // The run of `blocks` blocks from block `first` (mod p), as one or two operations.
    auto add = [&](P2POp::Kind kind, int first, int peer) {
      const int head = std::min(blocks, size - first);
      ops[count++] = {kind, out + static_cast<std::size_t>(first) * n, head * n, peer};
      if (head < blocks) ops[count++] = {kind, out, (blocks - head) * n, peer};
    };
    add(P2POp::Kind::kRecv, from, from);
    if (dist == 1) {  // the own block goes straight from sendbuf, copied into place meanwhile
      ops[count++] = P2POp::send(args.sendbuf, n, to);
    } else {
      add(P2POp::Kind::kSend, rank, to);
    }
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start({ops, static_cast<std::size_t>(count)}, tag, &request));
    if (copyPending) std::memcpy(own, args.sendbuf, n);
    copyPending = false;
    OVERPASS_CHECK(team.transport.wait(request));
  }
  if (copyPending) std::memcpy(own, args.sendbuf, n);  // p = 1
  return Status::kOk;
}

}  // namespace overpass
