// Alltoallv through the node's shared memory: every rank copies each of its outgoing blocks that
// fits one slot into its buffer (p - 1 slots of whole cache lines, slot k for rank r + 1 + k, as
// in the shm alltoall) and copies, from every other rank's buffer, the block meant for it. The
// own block never enters the buffer: it is copied once, straight into recvbuf, so a slot is a
// third of the buffer at np 4 where it was a quarter (skewed counts at 16 KiB: 2.0x Open MPI,
// was 0.97x; docs/PERFORMANCE.md, "The alltoallv's own block out of the round"). A block larger
// than a slot its receiver reads straight from its sender's send buffer (coll/phases/cma.h),
// whose address the sender puts in the slot: sender and receiver both know the block's size, so
// both take the same way. Each rank knows only its own counts: a header beside the stamp carries
// each rank's largest block for another rank, so after the round every rank knows the largest of
// all; where it was larger than a slot, one round more holds each rank whose blocks are read
// until their receivers have read them (the others only publish it). Where the ranks may not read
// each other's memory (agreed at the channel's first call that asks), a large block's first slot
// goes through the round and the rest through the transport (alltoallvLinear), on every rank
// alike. Rounds in lockstep sized by the largest block made skewed and large calls 0.5x Open MPI
// (docs/PERFORMANCE_HISTORY.md); the rest through the transport 0.63-0.98x from 16 KiB at np 4
// (docs/PERFORMANCE.md, "Alltoallv's large blocks read from the sender"). Each rank reads from
// rank r + 1 first, so that not all read one sender at once.
// Cost: one round + copy in + copy out of the other ranks' blocks up to a slot, one copy of the
// own block; with a larger block between two ranks anywhere, one read of each such block and one
// round more.
// Preconditions: the team shares one channel and a buffer holds p - 1 slots of 64 bytes; sendbuf
// and recvbuf do not overlap.
// Result: block q of rank r's send blocks at block r of rank q's receive blocks.
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/phases/cma.h"
#include "common/log.h"
#include "shm/channel.h"

namespace overpass {
namespace {

// The rest of every other rank's block past its first `slot` bytes, exchanged point to point.
Status sendRest(const CollArgs& args, Team& team, std::size_t slot) {
  const int p = team.size(), r = team.rank();
  std::vector<std::size_t> bytes(2 * static_cast<std::size_t>(p));
  std::vector<std::ptrdiff_t> offset(2 * static_cast<std::size_t>(p));
  auto rest = [&](const BlockLayout& b, std::size_t* restBytes, std::ptrdiff_t* restOffset) {
    for (int q = 0; q < p; ++q) {
      restBytes[q] = q != r && b.bytes[q] > slot ? b.bytes[q] - slot : 0;
      restOffset[q] = b.offset[q] + static_cast<std::ptrdiff_t>(slot);
    }
    return BlockLayout{restBytes, restOffset};
  };
  CollArgs remainder = args;
  remainder.sendBlocks = rest(args.sendBlocks, bytes.data(), offset.data());
  remainder.recvBlocks = rest(args.recvBlocks, bytes.data() + p, offset.data() + p);
  return alltoallvLinear(remainder, team);
}

}  // namespace

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
  if (ch.peerReads() == ShmChannel::PeerReads::kUnknown) {  // learnt once, by every rank alike
    std::vector<CmaCard> cards;
    if (const Status s = cmaOpen(args, team, cards); s != Status::kOk && s != Status::kDeclined)
      return s;
  }
  const bool reads = ch.peerReads() == ShmChannel::PeerReads::kYes;
  const std::size_t slot = ch.slotBytes(static_cast<std::size_t>(p - 1));
  std::uint64_t mine = 0;  // this rank's largest block for another rank
  for (int q = 0; q < p; ++q)
    if (q != r) mine = std::max<std::uint64_t>(mine, sb.bytes[q]);
  OVERPASS_CHECK(ch.reserve());
  std::memcpy(ch.next(sizeof mine), &mine, sizeof mine);
  unsigned char* slots = ch.next(ShmChannel::kLines);
  for (int k = 0; k < p - 1; ++k) {
    const int q = (r + 1 + k) % p;
    unsigned char* const to = slots + k * slot;
    if (reads && sb.bytes[q] > slot) {  // the block's address, for its receiver to read
      const std::uint64_t at = reinterpret_cast<std::uint64_t>(in + sb.offset[q]);
      std::memcpy(to, &at, sizeof at);
    } else if (const std::size_t c = std::min(slot, sb.bytes[q])) {
      std::memcpy(to, in + sb.offset[q], c);
    }
  }
  OVERPASS_CHECK(ch.sync());
  // From rank r + 1 on, so that the ranks do not all read one sender's memory at once; rank q
  // keeps this rank's block in its slot r - q - 1.
  std::uint64_t most = mine;  // every rank's largest block for another rank
  for (int s = 1; s < p; ++s) {
    const int q = (r + s) % p;
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, ch.peer(q, sizeof theirs), sizeof theirs);
    most = std::max(most, theirs);
    const unsigned char* const from = ch.peer(q, ShmChannel::kLines) + ((r - q - 1 + p) % p) * slot;
    unsigned char* const to = out + rb.offset[q];
    if (reads && rb.bytes[q] > slot) {
      std::uint64_t at = 0;
      std::memcpy(&at, from, sizeof at);
      if (!cmaRead(static_cast<pid_t>(ch.pid(q)), to, at, rb.bytes[q])) {
        OVERPASS_ERROR("alltoallv shm: reading the peer's memory failed: %s", std::strerror(errno));
        return Status::kTransportError;
      }
    } else if (const std::size_t c = std::min(slot, rb.bytes[q])) {
      std::memcpy(to, from, c);
    }
  }
  if (rb.bytes[r]) std::memcpy(out + rb.offset[r], in + sb.offset[r], rb.bytes[r]);
  if (most <= slot) return Status::kOk;
  if (!reads) return sendRest(args, team, slot);
  // One round more, in which a rank waits for the receivers of the blocks read from its memory.
  OVERPASS_CHECK(ch.sync(r));
  for (int q = 0; q < p; ++q)
    if (q != r && sb.bytes[q] > slot) OVERPASS_CHECK(ch.await(q));
  return Status::kOk;
}

}  // namespace overpass
