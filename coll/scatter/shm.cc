// Scatter through the node's shared memory: per round the root copies a chunk of every rank's
// block into its buffer (p chunks per buffer); every rank copies its own chunk out.
// Cost per round: one round + the root's copy in (p chunks) + one copy out per rank.
// Preconditions: the team shares one channel and a buffer holds p chunks of at least one byte.
// Result: block r of the root's sendbuf in rank r's recvbuf.
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
  const std::size_t chunk = ch.bufferBytes() / p;
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t c = std::min(chunk, n - off);
    if (isRoot) {
      OVERPASS_CHECK(ch.reserve());
      for (int q = 0; q < p; ++q) std::memcpy(ch.next(p * c) + q * c, in + q * n + off, c);
    }
    OVERPASS_CHECK(ch.sync(isRoot ? r : args.root));  // only the root's arrival is waited for
    if (!(isRoot && out == in + r * n))
      std::memcpy(out + off, ch.peer(args.root, p * c) + r * c, c);
  }
  return Status::kOk;
}

}  // namespace overpass
