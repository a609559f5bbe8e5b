// Barrier through the node's shared memory: one round (shm/channel.h): every rank publishes it
// and waits until all have. Cost: one flag write and p flag reads. Preconditions: the team
// shares one channel.
#include "coll/algorithms.h"

namespace overpass {

Status barrierShm(const CollArgs& /*args*/, Team& team) {
  if (team.size() == 1) return Status::kOk;
  return team.shm->sync();
}

}  // namespace overpass
