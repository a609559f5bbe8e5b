// Barrier by dissemination: in round k (distance d = 2^k) every rank sends an empty message to
// r + d and waits for the one from r - d; after ceil(log2 p) rounds every rank has heard,
// directly or not, from every other.
// Cost: ceil(log2 p) x alpha. Preconditions: none.
#include "coll/algorithms.h"

namespace overpass {

Status barrierDissemination(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  for (int d = 1; d < size; d <<= 1)
    OVERPASS_CHECK(team.transport.sendrecv(nullptr, 0, (rank + d) % size, nullptr, 0,
                                           (rank - d + size) % size, tag));
  return Status::kOk;
}

}  // namespace overpass
