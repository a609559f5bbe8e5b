// Alltoall through the node's shared memory: per round every rank copies a chunk of each of its
// p - 1 blocks for the other ranks into its buffer (slot k for rank r + 1 + k); every rank then
// copies, from every other rank's buffer, the chunk meant for it. The own block never enters the
// buffer: it is copied once, after the first round. With a slot fewer, a small call fits beside
// the round's stamp sooner (shm/channel.h; at np 2 blocks of up to 48 bytes arrive with the stamp
// in its cache line), and at np 2 half the copies are gone (docs/PERFORMANCE.md, "The own block
// stays out of the round").
// Cost per round: one round + copy in (p - 1 chunks) + copy out (p - 1 chunks); the own block
// once. Preconditions: the team shares one channel and a buffer holds p - 1 chunks of 64 bytes.
// sendbuf and recvbuf do not overlap. Result: block j of rank i's sendbuf at block i of rank j's
// recvbuf.
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
  const auto slots = static_cast<std::size_t>(p - 1);
  const std::size_t chunk = ch.slotBytes(slots);
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t c = std::min(chunk, n - off);
    OVERPASS_CHECK(ch.reserve());
    unsigned char* const mine = ch.next(slots * c);
    for (int k = 0; k < p - 1; ++k) std::memcpy(mine + k * c, b.send((r + 1 + k) % p) + off, c);
    OVERPASS_CHECK(ch.sync());
    for (int k = 0; k < p - 1; ++k) {  // rank q keeps this rank's chunk in its slot r - q - 1
      const int q = (r + 1 + k) % p;
      std::memcpy(b.recv(q) + off, ch.peer(q, slots * c) + ((r - q - 1 + p) % p) * c, c);
    }
    b.copyOwn();
  }
  return Status::kOk;
}

}  // namespace overpass
