// Scatterv, linear: the root sends each rank its block, of the size it was given (the receivers
// know only their own); empty blocks are not sent.
// Cost: (p - 1) alpha + (N - n_root) beta at the root.
// Preconditions: none. Result: rank q's block at recvbuf of rank q.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"

namespace overpass {

Status scattervLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (rank != args.root)
    return args.bytes ? team.transport.recv(args.recvbuf, args.bytes, args.root, tag) : Status::kOk;
  const BlockLayout& b = args.sendBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  std::vector<P2POp> ops;
  ops.reserve(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q)
    if (q != rank && b.bytes[q]) ops.push_back(P2POp::send(in + b.offset[q], b.bytes[q], q));
  Transport::Request request;
  if (!ops.empty()) OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  const unsigned char* own = in + b.offset[rank];
  if (b.bytes[rank] && own != args.recvbuf) std::memcpy(args.recvbuf, own, b.bytes[rank]);
  return ops.empty() ? Status::kOk : team.transport.wait(request);
}

}  // namespace overpass
