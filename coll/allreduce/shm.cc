// Allreduce through the node's shared memory (shm/channel.h), for teams on one node.
//
// Steps: up to kAllreduceShmOneRoundBytes, one round: every rank copies its vector into its
// buffer and combines all p of them itself (p n reduced, but a single synchronisation). Above,
// per chunk of up to one buffer: round 1, every rank copies its chunk into its buffer;
// then rank r combines slice r of every rank's chunk in rank order (coll/shm_reduce_chunk.h)
// into its next buffer; round 2, every rank copies every finished slice into recvbuf.
// Cost per chunk: 2 rounds (a flag write and p flag reads each) + copy in (n) + reduce
// ((p - 1)/p n read twice, n/p written) + copy out (n): memory traffic only, no messages.
// Preconditions: the team shares one channel (call.shmBuffer > 0). Combines in rank order: bits
// equal to every other rank-order algorithm's, on every rank. Result: recvbuf on every rank.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/reduce_kernels.h"
#include "coll/shm_reduce_chunk.h"

namespace overpass {

Status allreduceShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  if (p == 1 || args.count == 0) {
    if (in != out && args.bytes) std::memmove(out, in, args.bytes);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t e = args.bytes / args.count;
  if (args.bytes <= kAllreduceShmOneRoundBytes && args.bytes <= ch.bufferBytes()) {
    // Small vectors: one round; every rank combines all p contributions itself, in rank order
    // (the same operations as the slices below), through two scratch buffers.
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(), in, args.bytes);
    OVERPASS_CHECK(ch.sync());
    unsigned char* tmp[2] = {static_cast<unsigned char*>(team.scratch.get(0, args.bytes)),
                             static_cast<unsigned char*>(team.scratch.get(1, args.bytes))};
    const unsigned char* acc = ch.peer(0);
    for (int q = 1; q < p; ++q) {
      unsigned char* target = q == p - 1 ? out : tmp[q % 2];
      reduceInto(acc, ch.peer(q), target, args.count, args.type, args.op, args.user);
      acc = target;
    }
    return Status::kOk;
  }
  const std::size_t chunk = ch.bufferBytes() / e;  // elements per round
  for (std::size_t first = 0; first < args.count; first += chunk) {
    const std::size_t n = std::min(chunk, args.count - first);
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(), in + first * e, n * e);
    OVERPASS_CHECK(ch.sync());
    const std::size_t base = n / p, extra = n % p;
    auto sliceStart = [&](int q) { return q * base + std::min<std::size_t>(q, extra); };
    auto sliceSize = [&](int q) { return base + (static_cast<std::size_t>(q) < extra); };
    OVERPASS_CHECK(ch.reserve());
    shmReduceSlice(args, ch, sliceStart(r) * e, sliceSize(r), ch.next());
    OVERPASS_CHECK(ch.sync());
    for (int q = 0; q < p; ++q)
      std::memcpy(out + (first + sliceStart(q)) * e, ch.peer(q), sliceSize(q) * e);
  }
  return Status::kOk;
}

}  // namespace overpass
