// Scatter, linear: the root posts one send per rank at once; every other rank receives its block.
// Cost: (p - 1) x (alpha + n beta) at the root.
// Preconditions: none. Result: block i of the root's sendbuf in recvbuf of rank i.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"

namespace overpass {

Status scatterLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (rank != args.root) return team.transport.recv(args.recvbuf, args.bytes, args.root, tag);
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  std::vector<P2POp> ops;
  ops.reserve(size);
  for (int i = 0; i < size; ++i)
    if (i != rank)
      ops.push_back(P2POp::send(in + static_cast<std::size_t>(i) * args.bytes, args.bytes, i));
  // The own block is copied while the sends are in flight.
  Transport::Request request;
  OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  const void* own = in + static_cast<std::size_t>(rank) * args.bytes;
  if (own != args.recvbuf && args.bytes) std::memcpy(args.recvbuf, own, args.bytes);
  return team.transport.wait(request);
}

}  // namespace overpass
