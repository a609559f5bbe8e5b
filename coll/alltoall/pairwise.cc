// Alltoall by pairwise exchange: in step s (1..p-1) rank r sends its block for r + s and receives
// the block of r - s.
// Cost: (p - 1) x (alpha + n beta), n = one block.
// Preconditions: sendbuf and recvbuf do not overlap. Result: block j of rank i's sendbuf at block
// i of rank j's recvbuf.
#include "coll/algorithms.h"
#include "coll/phases/alltoall_blocks.h"

namespace overpass {

Status alltoallPairwise(const CollArgs& args, Team& team) {
  AlltoallBlocks b(args, team);
  if (b.empty()) return Status::kOk;
  for (int s = 1; s < b.size; ++s) {
    const int dst = (b.rank + s) % b.size, src = (b.rank - s + b.size) % b.size;
    OVERPASS_CHECK(team.transport.sendrecv(b.send(dst), b.n, dst, b.recv(src), b.n, src, b.tag));
  }
  // The own block last: a local copy first would hold up every peer's first exchange.
  b.copyOwn();
  return Status::kOk;
}

}  // namespace overpass
