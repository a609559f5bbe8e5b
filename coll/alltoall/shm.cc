// Alltoall through the node's shared memory: per round every rank copies a chunk of each of its
// p outgoing blocks into its buffer; every rank then copies, from every rank's buffer, the chunk
// meant for it.
// Cost per round: one round + copy in (p chunks) + copy out (p chunks). Preconditions: the team
// shares one channel and a buffer holds p chunks of at least one byte. sendbuf and recvbuf do
// not overlap. Result: block j of rank i's sendbuf at block i of rank j's recvbuf.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/alltoall_blocks.h"

namespace overpass {

Status alltoallShm(const CollArgs& args, Team& team) {
  AlltoallBlocks b(args, team);
  if (b.empty()) return Status::kOk;
  const int p = b.size, r = b.rank;
  const std::size_t n = b.n;
  if (p == 1) {
    b.copyOwn();
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t chunk = ch.bufferBytes() / p;
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t c = std::min(chunk, n - off);
    OVERPASS_CHECK(ch.reserve());
    for (int q = 0; q < p; ++q) std::memcpy(ch.next(p * c) + q * c, b.send(q) + off, c);
    OVERPASS_CHECK(ch.sync());
    for (int q = 0; q < p; ++q) std::memcpy(b.recv(q) + off, ch.peer(q, p * c) + r * c, c);
  }
  return Status::kOk;
}

}  // namespace overpass
