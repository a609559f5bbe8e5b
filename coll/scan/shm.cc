// Scan and exscan through the node's shared memory: per round every rank copies the next chunk
// (up to one buffer, whole elements) of its vector into its buffer; after one round rank r folds
// the chunks of ranks 0..r (exscan: 0..r-1) in rank order, ((x0 op x1) op x2) ..., with the
// running result as the left operand: the bits of every rank-order algorithm (deterministic
// mode), and any operation, commutative or not.
// Cost per round: one round + copy in + r reductions of a chunk at rank r.
// Preconditions: the team shares one channel whose buffer holds one element.
// Result: scan: x0 op ... op xr at recvbuf of rank r; exscan: x0 op ... op x(r-1), rank 0's
// recvbuf untouched.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/shm_fold.h"

namespace overpass {
namespace {

Status prefixShm(const CollArgs& args, Team& team, bool inclusive) {
  const int p = team.size(), r = team.rank();
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const int last = inclusive ? r : r - 1;  // the last rank whose input this rank combines
  if (p == 1) {
    if (inclusive && in != out) std::memcpy(out, in, n);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const ShmFold fold(args, team);
  const std::size_t chunk = fold.chunk();
  if (chunk == 0)
    return decline(args.coll, "shm", "an element is larger than a shared-memory buffer");
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t c = std::min(chunk, n - off);
    OVERPASS_CHECK(ch.reserve());
    std::memcpy(ch.next(c), in + off, c);
    OVERPASS_CHECK(ch.sync());
    if (last >= 0) fold.fold(last, c, 0, c, out + off);
  }
  return Status::kOk;
}

}  // namespace

Status scanShm(const CollArgs& args, Team& team) {
  return prefixShm(args, team, true);
}

Status exscanShm(const CollArgs& args, Team& team) {
  return prefixShm(args, team, false);
}

}  // namespace overpass
