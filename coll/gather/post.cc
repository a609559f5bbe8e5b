// Gather of small blocks through posts in the node's shared memory (shm/channel.h): every other
// rank posts its block into its box for the root and returns at once, as the MPI library's ranks
// do after an inline send; the root takes the blocks in rank order from the one after it. No
// round: nobody waits for another rank's previous call, only for the posts it needs (a sender,
// where the root has not taken its post kPostSlots calls before).
// Cost: one post per rank (a copy of n into the box, one stamp), the root's p - 1 takes.
// Preconditions: the team shares one channel with post boxes (at most ShmArena::kPostRanks ranks)
// and a block fits one post. Result: block q of the root's recvbuf = rank q's block.
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status gatherPost(const CollArgs& args, Team& team) {
  if (!fitsPosts(args, team)) return Status::kDeclined;
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const int p = team.size(), r = team.rank(), root = args.root;
  ShmChannel& ch = *team.shm;
  if (r != root) return ch.post(root, args.sendbuf, n);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  for (int k = 1; k < p; ++k) {
    const int q = (root + k) % p;
    OVERPASS_CHECK(ch.take(q, out + static_cast<std::size_t>(q) * n, n));
  }
  unsigned char* own = out + static_cast<std::size_t>(r) * n;
  if (own != args.sendbuf) std::memcpy(own, args.sendbuf, n);
  return Status::kOk;
}

}  // namespace overpass
