// Reduce_scatter through the node's shared memory: per round every rank copies the next chunk
// (up to one buffer, whole elements) of its input vector into its buffer; after one round each
// rank folds, in rank order, the part of the chunk that lies in its own block, ((x0 op x1) op
// x2) ..., the running result as the left operand: the bits of every rank-order algorithm
// (deterministic mode). Every rank knows every block, so all agree on the rounds.
// Cost per round: one round + copy in (a chunk) + p - 1 reductions of the own part.
// Preconditions: the team shares one channel whose buffer holds one element.
// Result: block r of the reduction in recvbuf of rank r.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/shm_fold.h"

namespace overpass {

Status reduceScatterShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  const BlockLayout& b = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  if (p == 1) {
    if (b.bytes[0]) std::memcpy(out, in + b.offset[0], b.bytes[0]);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const ShmFold fold(args, team);
  const std::size_t chunk = fold.chunk();
  if (chunk == 0)
    return decline(args.coll, "shm", "an element is larger than a shared-memory buffer");
  const auto first = static_cast<std::size_t>(b.offset[r]), end = first + b.bytes[r];
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t c = std::min(chunk, n - off);
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(c), in + off, c);
    OVERPASS_CHECK(ch.sync());
    const std::size_t lo = std::max(off, first), hi = std::min(off + c, end);
    if (lo >= hi) continue;
    fold.fold(p - 1, c, lo - off, hi - lo, out + (lo - first));
  }
  return Status::kOk;
}

}  // namespace overpass
