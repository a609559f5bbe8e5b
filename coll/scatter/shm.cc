// Scatter through the node's shared memory: per round the root copies a chunk of each of the
// p - 1 blocks for the other ranks into its buffer (slot k for rank root + 1 + k); every other
// rank copies its chunk out. The root's own block never enters the buffer: it is copied once,
// straight from sendbuf to recvbuf (docs/PERFORMANCE.md, "The own block stays out of the round").
// Cost per round: one round + the root's copy in (p - 1 chunks) + one copy out per other rank;
// the root's own block once. Preconditions: the team shares one channel and a buffer holds p - 1
// chunks of 64 bytes. Result: block r of the root's sendbuf in rank r's recvbuf.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status scatterShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const bool isRoot = r == args.root;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  if (p == 1) {
    if (in != out) std::memcpy(out, in, n);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const auto slots = static_cast<std::size_t>(p - 1);
  const std::size_t chunk = ch.slotBytes(slots);
  const int root = args.root;
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t c = std::min(chunk, n - off);
    if (isRoot) {
      OVERPASS_CHECK(ch.reserve());
      unsigned char* const mine = ch.next(slots * c);
      for (int k = 0; k < p - 1; ++k)
        std::memcpy(mine + k * c, in + static_cast<std::size_t>((root + 1 + k) % p) * n + off, c);
    }
    OVERPASS_CHECK(ch.sync(isRoot ? r : root));  // only the root's arrival is waited for
    if (!isRoot) std::memcpy(out + off, ch.peer(root, slots * c) + ((r - root - 1 + p) % p) * c, c);
  }
  if (isRoot && out != in + static_cast<std::size_t>(r) * n)
    std::memcpy(out, in + static_cast<std::size_t>(r) * n, n);
  return Status::kOk;
}

}  // namespace overpass
