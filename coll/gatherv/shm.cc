// Gatherv through the node's shared memory: a first round in which every rank publishes the size
// of its block (only the root knows them all, and every rank must go through the same rounds:
// as many as the largest block needs), then per round every rank copies the next chunk (up to one
// buffer) of its block into its buffer and the root copies every chunk out; the others do not
// wait for the root.
// Cost: one round + per round: one round + copy in (own chunk) + the root's copy out.
// Preconditions: the team shares one channel and a buffer holds 8 bytes.
// Result: block q of rank q at recvbuf + recvBlocks.offset[q] at the root.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status gathervShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const bool isRoot = r == args.root;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const std::size_t mine = args.bytes;
  if (p == 1) {
    if (mine && out + args.recvBlocks.offset[r] != in)
      std::memcpy(out + args.recvBlocks.offset[r], in, mine);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  OVERPASS_CHECK(ch.reserve());
  const std::uint64_t size = mine;
  std::memcpy(ch.next(), &size, sizeof size);
  OVERPASS_CHECK(ch.sync());
  std::uint64_t most = 0;
  for (int q = 0; q < p; ++q) {
    std::uint64_t s = 0;
    std::memcpy(&s, ch.peer(q), sizeof s);
    most = std::max(most, s);
  }
  const std::size_t buffer = ch.bufferBytes();
  for (std::size_t off = 0; off < most; off += buffer) {
    OVERPASS_CHECK(ch.reserve());
    if (mine > off) std::memcpy(ch.next(), in + off, std::min(buffer, mine - off));
    OVERPASS_CHECK(ch.sync(isRoot ? ShmChannel::kAll : r));
    if (!isRoot) continue;
    const BlockLayout& b = args.recvBlocks;
    for (int q = 0; q < p; ++q) {
      unsigned char* to = out + b.offset[q] + off;
      if (b.bytes[q] > off && !(q == r && to == in + off))
        std::memcpy(to, ch.peer(q), std::min(buffer, b.bytes[q] - off));
    }
  }
  return Status::kOk;
}

}  // namespace overpass
