// Broadcast along a binomial tree rooted at `root`.
//
// Steps: in ranks relative to the root (v = (rank - root) mod p), rank v receives from
// v - lowbit(v), then sends to v + m for every power of two m below lowbit(v), all at once
// (largest subtree first).
// Cost: ceil(log2 p) x (alpha + n beta).
// Preconditions: none. Result: recvbuf on every rank.
#include "coll/algorithms.h"

namespace overpass {

Status bcastBinomial(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (size == 1 || args.bytes == 0) return Status::kOk;
  const int v = (rank - args.root + size) % size;
  int mask = 1;
  while (mask < size) {
    if (v & mask) {
      const int parent = (v - mask + args.root) % size;
      OVERPASS_CHECK(team.transport.recv(args.recvbuf, args.bytes, parent, tag));
      break;
    }
    mask <<= 1;
  }
  // Every child's send in one batch: a rendezvous send to the first child does not hold up the
  // others.
  P2POp sends[32];
  std::size_t count = 0;
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < size)
      sends[count++] = P2POp::send(args.recvbuf, args.bytes, (v + mask + args.root) % size);
  return count ? team.transport.exchange({sends, count}, tag) : Status::kOk;
}

}  // namespace overpass
