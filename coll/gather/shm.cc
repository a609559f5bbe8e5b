// Gather through the node's shared memory: shmGather (coll/phases/shm_gather.h) with only the root
// copying out; the other ranks do not wait for each other.
// Cost per chunk: one round + copy in (n; at the root only where the block takes one round) + the
// root's copy out (p n).
// Preconditions: the team shares one channel. Result: block q of the root's recvbuf = rank q's
// block.
#include "coll/algorithms.h"
#include "coll/phases/shm_gather.h"

namespace overpass {

Status gatherShm(const CollArgs& args, Team& team) {
  return shmGather(args, team, args.root);
}

}  // namespace overpass
