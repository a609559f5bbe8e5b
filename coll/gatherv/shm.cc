// Gatherv through the node's shared memory: per round every rank copies the next chunk (up to one
// buffer, beside a header) of its block into its buffer and the root copies every chunk out.
// Only the root knows every block, yet every rank must go through the same rounds, as many as
// the largest block needs: the header of the first round carries each rank's block size, and in
// that round every rank waits for all; in the later ones only the root does.
// Cost per round: one round + copy in (own chunk) + the root's copy out.
// Preconditions: the team shares one channel.
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
  const std::uint64_t mine = args.bytes;
  if (p == 1) {
    if (mine && out + args.recvBlocks.offset[r] != in)
      std::memcpy(out + args.recvBlocks.offset[r], in, mine);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t chunk = ch.bufferBytes();
  std::uint64_t most = 0;  // known after the first round
  for (std::size_t off = 0; off == 0 || off < most; off += chunk) {
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(sizeof mine), &mine, sizeof mine);  // beside the stamp, the chunk after
    if (mine > off) std::memcpy(ch.next(ShmChannel::kLines), in + off, std::min(chunk, mine - off));
    OVERPASS_CHECK(ch.sync(off == 0 || isRoot ? ShmChannel::kAll : r));
    for (int q = 0; q < p && off == 0; ++q) {
      std::uint64_t theirs = 0;
      std::memcpy(&theirs, ch.peer(q, sizeof theirs), sizeof theirs);
      most = std::max(most, theirs);
    }
    if (!isRoot) continue;
    const BlockLayout& b = args.recvBlocks;
    // The root's own chunk from its send buffer, not from the line it has just published
    // (docs/PERFORMANCE.md, "The order of the polls").
    for (int q = 0; q < p; ++q) {
      unsigned char* to = out + b.offset[q] + off;
      if (b.bytes[q] > off && !(q == r && to == in + off))
        std::memcpy(to, q == r ? in + off : ch.peer(q, ShmChannel::kLines),
                    std::min(chunk, b.bytes[q] - off));
    }
  }
  return Status::kOk;
}

}  // namespace overpass
