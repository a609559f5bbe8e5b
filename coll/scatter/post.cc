// Scatter of small blocks through posts in the node's shared memory (shm/channel.h): the root
// posts each other rank its block into its box for that rank and returns, as the MPI library's
// root does after its inline sends; every other rank takes its block. No round: the root waits
// only where a rank has not taken its post kPostSlots calls before.
// Cost: the root's p - 1 posts (a copy of n each, one stamp), one take per other rank.
// Preconditions: the team shares one channel with post boxes (at most ShmArena::kPostRanks ranks)
// and a block fits one post. Result: block r of the root's sendbuf in rank r's recvbuf.
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status scatterPost(const CollArgs& args, Team& team) {
  if (!fitsPosts(args, team)) return Status::kDeclined;
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  const int p = team.size(), r = team.rank(), root = args.root;
  ShmChannel& ch = *team.shm;
  if (r != root) return ch.take(root, args.recvbuf, n);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  for (int k = 1; k < p; ++k) {
    const int q = (root + k) % p;
    OVERPASS_CHECK(ch.post(q, in + static_cast<std::size_t>(q) * n, n));
  }
  const unsigned char* own = in + static_cast<std::size_t>(r) * n;
  if (own != args.recvbuf) std::memcpy(args.recvbuf, own, n);
  return Status::kOk;
}

}  // namespace overpass
