// Allreduce through the node's shared memory (shm/channel.h), for teams on one node: shmReduce
// (coll/phases/shm_reduce.h) with every rank copying the result out.
//
// Steps: up to 4 KiB, one round: every rank copies its vector into its buffer and combines all p
// of them itself (p n reduced, but a single synchronisation). Above, per chunk of up to one
// buffer: round 1, every rank copies its chunk into its buffer, then combines its slice of all p
// chunks in rank order; round 2, every rank copies every finished slice into recvbuf.
// Cost per chunk: 2 rounds (a flag write and p flag reads each) + copy in (n) + reduce
// ((p - 1)/p n read twice, n/p written) + copy out (n): memory traffic only, no messages.
// Preconditions: the team shares one channel (call.shmBuffer > 0). Combines in rank order: bits
// equal to every other rank-order algorithm's, on every rank. Result: recvbuf on every rank.
#include "coll/algorithms.h"
#include "coll/phases/shm_reduce.h"

namespace overpass {

Status allreduceShm(const CollArgs& args, Team& team) {
  return shmReduce(args, team, kEveryRank);
}

}  // namespace overpass
