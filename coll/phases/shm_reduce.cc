#include <algorithm>
#include <cstring>

#include "coll/phases/shm_reduce.h"
#include "kernels/reduce_kernels.h"
#include "shm/stream_copy.h"

namespace overpass {
namespace {

// Reduce on two ranks above one round: a pipeline. The other rank copies its vector chunk after
// chunk into its buffers (the two in turn); the root combines each chunk with its own as it
// arrives, straight into recvbuf, while the next one is copied. Per rank n read and n written
// (the other), 2n read and n written (the root), against the split's copy in, reduce and the
// root's copy out of the whole vector (2.5n read and 2n written at the root). Chunks of an
// eighth of the vector (8 KiB to one buffer) so that copying and combining overlap from the
// second chunk on. From 128 KiB the chunks are stored around the cache: the root then reads
// them from memory, faster than out of the other core's cache (np 2, AMD EPYC: 1 MiB 65 us
// against 123, 256 KiB 21 against 31; 64 KiB 8 against 6).
constexpr std::size_t kPairStreamAbove = 64 << 10;
Status pairReduce(const CollArgs& args, ShmChannel& ch, int root, const unsigned char* in,
                  unsigned char* out) {
  const std::size_t e = args.bytes / args.count;
  const std::size_t chunkBytes = std::clamp<std::size_t>(
      args.bytes / 8, std::min<std::size_t>(8192, ch.bufferBytes()), ch.bufferBytes());
  const std::size_t chunk = std::max<std::size_t>(1, chunkBytes / e);
  const int r = ch.rank(), other = 1 - r;
  const bool stream = args.bytes > kPairStreamAbove;
  for (std::size_t first = 0; first < args.count; first += chunk) {
    const std::size_t n = std::min(chunk, args.count - first), at = first * e;
    if (r != root) {
      OVERPASS_CHECK(ch.reserve());
      if (stream)
        streamCopy(ch.next(n * e), in + at, n * e);
      else
        std::memcpy(ch.next(n * e), in + at, n * e);
      OVERPASS_CHECK(ch.sync(r));  // publishes; waits for nobody
      continue;
    }
    OVERPASS_CHECK(ch.sync(other));
    // The root may write into the other's buffer: only it reads it.
    reducePair(args, root, in + at, ch.peer(other, n * e), out + at, n);
  }
  return Status::kOk;
}

}  // namespace

Status shmReduce(const CollArgs& args, Team& team, int root) {
  const int p = team.size(), r = team.rank();
  const bool needsResult = root == kEveryRank || r == root;
  // Whom a round waits for: every rank where the result is read, nobody (itself) elsewhere.
  const int waitFor = needsResult ? ShmChannel::kAll : r;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  if (p == 1 || args.count == 0) {
    if (needsResult && in != out && args.bytes) std::memmove(out, in, args.bytes);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t e = args.bytes / args.count;
  if (args.bytes <= kShmOneRoundBytes && args.bytes <= ch.bufferBytes()) {
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(args.bytes), in, args.bytes);
    OVERPASS_CHECK(ch.sync(waitFor));
    if (!needsResult) return Status::kOk;
    unsigned char* tmp[2] = {
        static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseIncoming, args.bytes)),
        static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseBlocks, args.bytes))};
    // In rank order, this rank's own vector from its send buffer, not from the line it has just
    // published (docs/PERFORMANCE.md, "The order of the polls"); but rank 0 of two in place from
    // the line, since a result may not overlap the first operand of reduceInto.
    const bool ownFromSend = !(in == out && p == 2 && r == 0);
    auto vector = [&](int q) { return q == r && ownFromSend ? in : ch.peer(q, args.bytes); };
    const unsigned char* acc = vector(0);
    for (int q = 1; q < p; ++q) {
      unsigned char* target = q == p - 1 ? out : tmp[q % 2];
      reduceInto(acc, vector(q), target, args.count, args.type, args.op, args.user);
      acc = target;
    }
    return Status::kOk;
  }
  if (p == 2 && root != kEveryRank) return pairReduce(args, ch, root, in, out);
  const std::size_t chunk = ch.bufferBytes() / e;  // elements per round
  const bool stream = args.bytes > team.streamAbove;
  auto copyOut = [stream](void* to, const void* from, std::size_t bytes) {
    stream ? streamCopy(to, from, bytes) : static_cast<void>(std::memcpy(to, from, bytes));
  };
  for (std::size_t first = 0; first < args.count; first += chunk) {
    const std::size_t n = std::min(chunk, args.count - first);
    const std::size_t base = n / p, extra = n % p;
    auto sliceStart = [&](int q) { return q * base + std::min<std::size_t>(q, extra); };
    auto sliceSize = [&](int q) { return base + (static_cast<std::size_t>(q) < extra); };
    const std::size_t mine = sliceStart(r) * e, mineEnd = mine + sliceSize(r) * e;
    const std::size_t round = n * e;  // both rounds: the chunk, then at most a slice of it
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(round), in + first * e, mine);  // the peers' slices; this rank's stays
    std::memcpy(ch.next(round) + mineEnd, in + first * e + mineEnd, n * e - mineEnd);
    OVERPASS_CHECK(ch.sync());
    OVERPASS_CHECK(ch.reserve());
    shmReduceSlice(args, ch, round, mine, sliceSize(r), ch.next(round), in + first * e + mine);
    OVERPASS_CHECK(ch.sync(waitFor));
    if (needsResult)
      for (int q = 0; q < p; ++q)
        copyOut(out + (first + sliceStart(q)) * e, ch.peer(q, round), sliceSize(q) * e);
  }
  return Status::kOk;
}

}  // namespace overpass
