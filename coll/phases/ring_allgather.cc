#include "coll/phases/ring_allgather.h"

namespace overpass {

Status ringAllgather(const CollArgs& args, Team& team, const BlockSplit& blocks,
                     unsigned char* work) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int k = 0; k < size - 1; ++k) {
    const int sendBlock = blocks.wrap(rank - k), recvBlock = blocks.wrap(rank - k - 1);
    OVERPASS_CHECK(team.transport.sendrecv(work + blocks.offset(sendBlock), blocks.bytes(sendBlock),
                                           right, work + blocks.offset(recvBlock),
                                           blocks.bytes(recvBlock), left, tag));
  }
  return Status::kOk;
}

}  // namespace overpass
