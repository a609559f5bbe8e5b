// Reduce through the node's shared memory: shmReduce (coll/phases/shm_reduce.h), the shm
// allreduce with only the root copying the result out; the other ranks never wait for each
// other (small vectors: they leave once their vector is in place).
//
// Cost per chunk of up to one buffer: 2 rounds + copy in (n) + reduce ((p - 1)/p n) + the root's
// copy out (n); up to 4 KiB one round and the root reduces all p vectors. Preconditions: the
// team shares one channel. Combines in rank order (bits equal to every rank-order algorithm's).
// Result: recvbuf at the root (other ranks' may be null).
#include "coll/algorithms.h"
#include "coll/phases/shm_reduce.h"

namespace overpass {

Status reduceShm(const CollArgs& args, Team& team) {
  return shmReduce(args, team, args.root);
}

}  // namespace overpass
