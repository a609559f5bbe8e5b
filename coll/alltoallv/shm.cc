// Alltoallv through the node's shared memory, for blocks that fit one round: every rank copies
// the first chunk of each of its outgoing blocks into slot q of its buffer (p slots of whole cache
// lines) and copies, from every rank's buffer, the chunk meant for it. Each rank knows only its
// own counts: a header beside the stamp carries each rank's largest outgoing block, so after
// this one round every rank knows the largest of all, and where it did not fit one slot all go
// on alike with the rest of every block through the transport (alltoallvLinear): rounds in
// lockstep sized by the largest block made skewed and large calls 0.5x
// (docs/PERFORMANCE_HISTORY.md).
// Cost: one round + copy in + copy out; beyond one slot, the linear exchange of the rest.
// Preconditions: the team shares one channel and a buffer holds p slots of 64 bytes; sendbuf and
// recvbuf do not overlap.
// Result: block q of rank r's send blocks at block r of rank q's receive blocks.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

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
  const std::size_t slot = ch.bufferBytes() / p / 64 * 64;  // every slot starts on a line
  const std::uint64_t mine = *std::max_element(sb.bytes, sb.bytes + p);
  std::uint64_t most = 0;  // known after the round
  OVERPASS_CHECK(ch.reserve());
  std::memcpy(ch.next(sizeof mine), &mine, sizeof mine);
  unsigned char* slots = ch.next(ShmChannel::kLines);
  for (int q = 0; q < p; ++q)
    if (const std::size_t c = std::min(slot, sb.bytes[q]))
      std::memcpy(slots + q * slot, in + sb.offset[q], c);
  OVERPASS_CHECK(ch.sync());
  for (int q = 0; q < p; ++q) {
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, ch.peer(q, sizeof theirs), sizeof theirs);
    most = std::max(most, theirs);
    if (const std::size_t c = std::min(slot, rb.bytes[q]))
      std::memcpy(out + rb.offset[q], ch.peer(q, ShmChannel::kLines) + r * slot, c);
  }
  if (most <= slot) return Status::kOk;
  // The rest of every block, past its first slot, exchanged point to point.
  std::vector<std::size_t> bytes(2 * static_cast<std::size_t>(p));
  std::vector<std::ptrdiff_t> offset(2 * static_cast<std::size_t>(p));
  auto rest = [&](const BlockLayout& b, std::size_t* restBytes, std::ptrdiff_t* restOffset) {
    for (int q = 0; q < p; ++q) {
      restBytes[q] = b.bytes[q] > slot ? b.bytes[q] - slot : 0;
      restOffset[q] = b.offset[q] + static_cast<std::ptrdiff_t>(slot);
    }
    return BlockLayout{restBytes, restOffset};
  };
  CollArgs remainder = args;
  remainder.sendBlocks = rest(sb, bytes.data(), offset.data());
  remainder.recvBlocks = rest(rb, bytes.data() + p, offset.data() + p);
  return alltoallvLinear(remainder, team);
}

}  // namespace overpass
