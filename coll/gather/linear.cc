// Gather, linear: every rank sends its block straight to the root, which posts all receives at
// once.
// Cost: (p - 1) x (alpha + n beta) at the root, which is the bottleneck.
// Preconditions: none. Result: block i of rank i at recvbuf + i * bytes on the root.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"

namespace overpass {

Status gatherLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (rank != args.root) return team.transport.send(args.sendbuf, args.bytes, args.root, tag);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  std::vector<P2POp> ops;
  ops.reserve(size);
  for (int i = 0; i < size; ++i)
    if (i != rank)
      ops.push_back(P2POp::recv(out + static_cast<std::size_t>(i) * args.bytes, args.bytes, i));
  // The own block is copied while the receives are in flight.
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  void* own = out + static_cast<std::size_t>(rank) * args.bytes;
  if (own != args.sendbuf && args.bytes) std::memcpy(own, args.sendbuf, args.bytes);
  return team.transport.wait(request);
}

}  // namespace overpass
