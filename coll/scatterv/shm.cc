// Scatterv through the node's shared memory: per round the root copies the next chunk of every
// rank's block into slot q of its buffer (p slots of whole cache lines); every rank copies its
// own chunk out. Only the root knows every block: the first round's header, beside the stamp,
// carries the number of rounds, which the largest block sets. Cost per round: one round + the
// root's copy in + one copy out per rank. Preconditions: the team shares one channel and a buffer
// holds p slots of 64 bytes. Result: rank q's block of the root's sendbuf in rank q's recvbuf.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status scattervShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const bool isRoot = r == args.root;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  const BlockLayout& b = args.sendBlocks;
  if (p == 1) {
    if (args.bytes && in + b.offset[r] != out) std::memcpy(out, in + b.offset[r], args.bytes);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  // A round: a header beside the stamp (the number of rounds, read in the first), p slots after.
  const std::size_t slot = ch.slotBytes(static_cast<std::size_t>(p));
  std::uint64_t rounds = 0;
  if (isRoot) {
    std::size_t most = 0;
    for (int q = 0; q < p; ++q) most = std::max(most, b.bytes[q]);
    rounds = (most + slot - 1) / slot;
  }
  for (std::uint64_t k = 0; k == 0 || k < rounds; ++k) {
    const std::size_t off = k * slot;
    if (isRoot) {
      OVERPASS_CHECK(ch.reserve());
      std::memcpy(ch.next(sizeof rounds), &rounds, sizeof rounds);
      for (int q = 0; q < p; ++q)
        if (b.bytes[q] > off)
          std::memcpy(ch.next(ShmChannel::kLines) + q * slot, in + b.offset[q] + off,
                      std::min(slot, b.bytes[q] - off));
    }
    OVERPASS_CHECK(ch.sync(isRoot ? r : args.root));  // only the root's arrival is waited for
    if (k == 0) std::memcpy(&rounds, ch.peer(args.root, sizeof rounds), sizeof rounds);
    const bool inPlace = isRoot && out == in + b.offset[r];
    if (args.bytes > off && !inPlace)
      std::memcpy(out + off, ch.peer(args.root, ShmChannel::kLines) + r * slot,
                  std::min(slot, args.bytes - off));
  }
  return Status::kOk;
}

}  // namespace overpass
