// Alltoallv through the node's shared memory: a first round in which every rank publishes its
// largest outgoing block (each rank knows only its own counts; every rank must go through the
// same rounds, as many as the largest block of all needs), then per round every rank copies the
// next chunk of each of its outgoing blocks into slot q of its buffer (p slots of buffer / p
// bytes) and copies, from every rank's buffer, the chunk meant for it.
// Cost: one round + per round: one round + copy in + copy out.
// Preconditions: the team shares one channel and a buffer holds p slots of 8 bytes or more;
// sendbuf and recvbuf do not overlap.
// Result: block q of rank r's send blocks at block r of rank q's receive blocks.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status alltoallvShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const BlockLayout &sb = args.sendBlocks, &rb = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  if (p == 1) {
    if (rb.bytes[0]) std::memcpy(out + rb.offset[0], in + sb.offset[0], rb.bytes[0]);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  OVERPASS_CHECK(ch.reserve());
  const std::uint64_t mine = *std::max_element(sb.bytes, sb.bytes + p);
  std::memcpy(ch.next(), &mine, sizeof mine);
  OVERPASS_CHECK(ch.sync());
  std::uint64_t most = 0;
  for (int q = 0; q < p; ++q) {
    std::uint64_t s = 0;
    std::memcpy(&s, ch.peer(q), sizeof s);
    most = std::max(most, s);
  }
  const std::size_t slot = ch.bufferBytes() / p;
  auto part = [&](std::size_t bytes, std::size_t off) {
    return bytes > off ? std::min(slot, bytes - off) : 0;
  };
  for (std::size_t off = 0; off < most; off += slot) {
    OVERPASS_CHECK(ch.reserve());
    for (int q = 0; q < p; ++q)
      if (const std::size_t c = part(sb.bytes[q], off))
        std::memcpy(ch.next() + q * slot, in + sb.offset[q] + off, c);
    OVERPASS_CHECK(ch.sync());
    for (int q = 0; q < p; ++q)
      if (const std::size_t c = part(rb.bytes[q], off))
        std::memcpy(out + rb.offset[q] + off, ch.peer(q) + r * slot, c);
  }
  return Status::kOk;
}

}  // namespace overpass
