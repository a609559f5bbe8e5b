// Allgather through the node's shared memory: shmGather (coll/phases/shm_gather.h) with every rank
// copying every block out.
// Cost per chunk: one round + copy in (n) + copy out (p n). Preconditions: the team shares one
// channel. Result: block q of recvbuf = rank q's block, on every rank.
#include "coll/algorithms.h"
#include "coll/phases/shm_gather.h"

namespace overpass {

Status allgatherShm(const CollArgs& args, Team& team) {
  return shmGather(args, team, kEveryRank);
}

}  // namespace overpass
