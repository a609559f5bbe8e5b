// Reduce_scatter_block through the node's shared memory.
//
// Steps, per chunk of every block (a buffer holds p chunks): one round in which every rank copies
// the chunks of the p - 1 blocks for the other ranks into its buffer; then rank r combines chunk
// r of every rank's buffer in rank order straight into its recvbuf, its own operand read from its
// send buffer (coll/phases/shm_reduce.h), as the shm allreduce's.
// Cost per round: copy in (p - 1 chunks) + reduce ((p - 1) chunks read twice). Preconditions: the
// team shares one channel; sendbuf and recvbuf do not overlap (the shim resolves MPI_IN_PLACE
// into a copy). Combines in rank order. Result: block r at rank r's recvbuf.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/phases/shm_reduce.h"

namespace overpass {

Status reduceScatterBlockShm(const CollArgs& args, Team& team) {
  const int p = team.size(), r = team.rank();
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  if (args.count == 0) return Status::kOk;
  if (p == 1) {
    std::memcpy(out, in, args.bytes);
    return Status::kOk;
  }
  ShmChannel& ch = *team.shm;
  const std::size_t e = args.bytes / args.count;
  const std::size_t chunk = ch.bufferBytes() / (e * p);  // elements of each block per round
  for (std::size_t first = 0; first < args.count; first += chunk) {
    const std::size_t n = std::min(chunk, args.count - first);
    OVERPASS_CHECK(ch.reserve());
    const std::size_t round = p * n * e;
    for (int j = 0; j < p; ++j)  // slot r, unread by the peers, holds partial results only
      if (j != r) std::memcpy(ch.next(round) + j * n * e, in + (j * args.count + first) * e, n * e);
    OVERPASS_CHECK(ch.sync());
    shmReduceSlice(args, ch, round, r * n * e, n, out + first * e,
                   in + (r * args.count + first) * e);
  }
  return Status::kOk;
}

}  // namespace overpass
