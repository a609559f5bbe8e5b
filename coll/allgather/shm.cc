// Allgather through the node's shared memory: per chunk of the block (up to one buffer), every
// rank copies its chunk into its buffer, one round, every rank copies every rank's chunk out.
// Cost per chunk: one round + copy in (n) + copy out (p n). Preconditions: the team shares one
// channel. Result: block q of recvbuf = rank q's block, on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status allgatherShm(const CollArgs& args, Team& team) {
  const int p = team.size();
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  if (p == 1) {
    if (in != out) std::memcpy(out, in, n);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  for (std::size_t off = 0; off < n; off += ch.bufferBytes()) {
    const std::size_t c = std::min(ch.bufferBytes(), n - off);
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(), in + off, c);
    OVERPASS_CHECK(ch.sync());
    for (int q = 0; q < p; ++q) std::memcpy(out + q * n + off, ch.peer(q), c);
  }
  return Status::kOk;
}

}  // namespace overpass
