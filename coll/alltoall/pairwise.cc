// Alltoall by pairwise exchange: in step s (1..p-1) rank r sends its block for r + s and receives
// the block of r - s.
// Cost: (p - 1) x (alpha + n beta), n = one block.
// Preconditions: sendbuf and recvbuf do not overlap. Result: block j of rank i's sendbuf at block
// i of rank j's recvbuf.
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status alltoallPairwise(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const std::size_t n = args.bytes;
  if (n == 0) return Status::kOk;
  for (int s = 1; s < size; ++s) {
    const int dst = (rank + s) % size, src = (rank - s + size) % size;
    OVERPASS_CHECK(team.transport.sendrecv(in + static_cast<std::size_t>(dst) * n, n, dst,
                                           out + static_cast<std::size_t>(src) * n, n, src, tag));
  }
  // The own block last: a local copy first would hold up every peer's first exchange.
  std::memcpy(out + rank * n, in + rank * n, n);
  return Status::kOk;
}

}  // namespace overpass
