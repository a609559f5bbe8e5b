// Allgatherv through the node's shared memory: per round every rank copies the next chunk (up to
// one buffer) of its block into its buffer and, after one round, every rank copies every rank's
// chunk out. Every rank knows every block, so all agree on the rounds: as many as the largest
// block needs.
// Cost per round: one round + copy in (own chunk) + copy out (every chunk).
// Preconditions: the team shares one channel. Result: block q of rank q at recvbuf +
// recvBlocks.offset[q] on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status allgathervShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const BlockLayout& b = args.recvBlocks;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const std::size_t most = *std::max_element(b.bytes, b.bytes + p);
  const bool inPlace = in == out + b.offset[r];
  if (p == 1 || most == 0) {
    if (b.bytes[r] && !inPlace) std::memcpy(out + b.offset[r], in, b.bytes[r]);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t buffer = ch.bufferBytes();
  auto part = [&](int q, std::size_t off) {
    return b.bytes[q] > off ? std::min(buffer, b.bytes[q] - off) : 0;
  };
  for (std::size_t off = 0; off < most; off += buffer) {
    OVERPASS_CHECK(ch.reserve());
    if (const std::size_t c = part(r, off)) std::memcpy(ch.next(c), in + off, c);
    OVERPASS_CHECK(ch.sync());
    // This rank's own chunk from its send buffer, not from the line it has just published
    // (docs/PERFORMANCE.md, "The order of the polls").
    for (int q = 0; q < p; ++q)
      if (const std::size_t c = part(q, off); c && !(q == r && inPlace))
        std::memcpy(out + b.offset[q] + off, q == r ? in + off : ch.peer(q, c), c);
  }
  return Status::kOk;
}

}  // namespace overpass
