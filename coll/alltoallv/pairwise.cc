// Alltoallv by pairwise exchange: in step s (1..p-1) rank r sends its block for r + s and
// receives the block of r - s, each rank knowing only its own counts (what it sends to and
// receives from each peer); empty blocks are neither sent nor received. The own block is copied
// after the exchanges.
// Cost: (p - 1) alpha + (bytes sent) beta.
// Preconditions: sendbuf and recvbuf do not overlap (the shim passes a copy in place).
// Result: block q of the result (from rank q) at recvbuf + recvBlocks.offset[q].
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status alltoallvPairwise(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const BlockLayout &in = args.sendBlocks, &out = args.recvBlocks;
  const auto* send = static_cast<const unsigned char*>(args.sendbuf);
  auto* recv = static_cast<unsigned char*>(args.recvbuf);
  for (int s = 1; s < size; ++s) {
    const int to = (rank + s) % size, from = (rank - s + size) % size;
    P2POp ops[2];
    int n = 0;
    if (out.bytes[from]) ops[n++] = P2POp::recv(recv + out.offset[from], out.bytes[from], from);
    if (in.bytes[to]) ops[n++] = P2POp::send(send + in.offset[to], in.bytes[to], to);
    if (n) OVERPASS_CHECK(team.transport.exchange({ops, static_cast<std::size_t>(n)}, tag));
  }
  if (out.bytes[rank])
    std::memcpy(recv + out.offset[rank], send + in.offset[rank], out.bytes[rank]);
  return Status::kOk;
}

}  // namespace overpass
