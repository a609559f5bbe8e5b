// Bcast of a small message through posts in the node's shared memory (shm/channel.h): the root
// posts the message into its box for every other rank and returns, as the MPI library's root
// does after its inline sends; every other rank takes it. No round: the root waits only where a
// rank has not taken its post kPostSlots calls before.
// Cost: the root's p - 1 posts (a copy of n each, one stamp), one take per other rank.
// Preconditions: the team shares one channel with post boxes (at most ShmArena::kPostRanks ranks)
// and the message fits one post. Result: recvbuf on every rank.
#include "coll/algorithms.h"

namespace overpass {

Status bcastPost(const CollArgs& args, Team& team) {
  if (!fitsPosts(args, team)) return Status::kDeclined;
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const int p = team.size(), r = team.rank(), root = args.root;
  ShmChannel& ch = *team.shm;
  if (r != root) return ch.take(root, args.recvbuf, n);
  for (int k = 1; k < p; ++k) OVERPASS_CHECK(ch.post((root + k) % p, args.recvbuf, n));
  return Status::kOk;
}

}  // namespace overpass
