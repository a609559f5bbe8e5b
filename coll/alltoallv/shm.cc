// Alltoallv through the node's shared memory: per round every rank copies the next chunk of each
// of its outgoing blocks into slot q of its buffer (p slots after a 64-byte header) and copies,
// from every rank's buffer, the chunk meant for it. Each rank knows only its own counts, yet
// every rank must go through the same rounds, as many as the largest block of all needs: the
// header of the first round carries each rank's largest outgoing block, so blocks that fit one
// slot take one round in all.
// Cost per round: one round + copy in + copy out.
// Preconditions: the team shares one channel and a buffer holds p slots of 64 bytes after its
// header (the registry asks for room for p + 1 slots);
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
  // The header takes a cache line, and every slot starts on one.
  constexpr std::size_t kHeader = 64;
  const std::size_t slot = (ch.bufferBytes() - kHeader) / p / kHeader * kHeader;
  const std::uint64_t mine = *std::max_element(sb.bytes, sb.bytes + p);
  std::uint64_t most = 0;  // known after the first round
  auto part = [&](std::size_t bytes, std::size_t off) {
    return bytes > off ? std::min(slot, bytes - off) : 0;
  };
  for (std::size_t off = 0; off == 0 || off < most; off += slot) {
    OVERPASS_CHECK(ch.reserve());
    unsigned char* buffer = ch.next();
    std::memcpy(buffer, &mine, sizeof mine);
    for (int q = 0; q < p; ++q)
      if (const std::size_t c = part(sb.bytes[q], off))
        std::memcpy(buffer + kHeader + q * slot, in + sb.offset[q] + off, c);
    OVERPASS_CHECK(ch.sync());
    for (int q = 0; q < p && off == 0; ++q) {
      std::uint64_t theirs = 0;
      std::memcpy(&theirs, ch.peer(q), sizeof theirs);
      most = std::max(most, theirs);
    }
    for (int q = 0; q < p; ++q)
      if (const std::size_t c = part(rb.bytes[q], off))
        std::memcpy(out + rb.offset[q] + off, ch.peer(q) + kHeader + r * slot, c);
  }
  return Status::kOk;
}

}  // namespace overpass
