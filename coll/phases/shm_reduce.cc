#include <algorithm>
#include <cstring>

#include "coll/phases/shm_reduce.h"
#include "kernels/reduce_kernels.h"
#include "shm/stream_copy.h"

namespace overpass {

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
    std::memcpy(ch.next(), in, args.bytes);
    OVERPASS_CHECK(ch.sync(waitFor));
    if (!needsResult) return Status::kOk;
    unsigned char* tmp[2] = {
        static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseIncoming, args.bytes)),
        static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kPhaseBlocks, args.bytes))};
    const unsigned char* acc = ch.peer(0);
    for (int q = 1; q < p; ++q) {
      unsigned char* target = q == p - 1 ? out : tmp[q % 2];
      reduceInto(acc, ch.peer(q), target, args.count, args.type, args.op, args.user);
      acc = target;
    }
    return Status::kOk;
  }
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
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(), in + first * e, mine);  // the peers' slices; this rank's stays put
    std::memcpy(ch.next() + mineEnd, in + first * e + mineEnd, n * e - mineEnd);
    OVERPASS_CHECK(ch.sync());
    OVERPASS_CHECK(ch.reserve());
    shmReduceSlice(args, ch, mine, sliceSize(r), ch.next(), in + first * e + mine);
    OVERPASS_CHECK(ch.sync(waitFor));
    if (needsResult)
      for (int q = 0; q < p; ++q)
        copyOut(out + (first + sliceStart(q)) * e, ch.peer(q), sliceSize(q) * e);
  }
  return Status::kOk;
}

}  // namespace overpass
