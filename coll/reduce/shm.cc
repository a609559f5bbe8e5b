// Reduce through the node's shared memory: the shm allreduce (coll/allreduce/shm.cc) with only
// the root copying the finished slices out; small vectors in one round that only the root waits
// for.
//
// Cost per chunk of up to one buffer: 2 rounds + copy in (n) + reduce ((p - 1)/p n) + the root's
// copy out (n). Preconditions: the team shares one channel. Combines in rank order (bits equal to
// every rank-order algorithm's). Result: recvbuf at the root (other ranks' may be null).
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/reduce_kernels.h"
#include "coll/shm_reduce_chunk.h"

namespace overpass {

Status reduceShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  if (p == 1 || args.count == 0) {
    if (r == args.root && in != out && args.bytes) std::memmove(out, in, args.bytes);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t e = args.bytes / args.count;
  if (args.bytes <= kAllreduceShmOneRoundBytes && args.bytes <= ch.bufferBytes()) {
    // Small vectors: one round; the other ranks leave as soon as their vector is in place, the
    // root combines all p in rank order (as the slices below do) through two scratch buffers.
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(), in, args.bytes);
    if (r != args.root) return ch.sync(r);
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
  const std::size_t chunk = ch.bufferBytes() / e;
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
    OVERPASS_CHECK(ch.sync(r == args.root ? ShmChannel::kAll : r));
    if (r == args.root)
      for (int q = 0; q < p; ++q)
        std::memcpy(out + (first + sliceStart(q)) * e, ch.peer(q), sliceSize(q) * e);
  }
  return Status::kOk;
}

}  // namespace overpass
