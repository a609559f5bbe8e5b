// Gatherv, linear: every rank sends its block to the root, which posts one receive per rank of
// the size it was given (the senders know only their own); empty blocks are not sent.
// Cost: (p - 1) alpha + (N - n_root) beta at the root.
// Preconditions: none. Result: block q of rank q at recvbuf + recvBlocks.offset[q] at the root.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"

namespace overpass {

Status gathervLinear(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  if (rank != args.root)
    return args.bytes ? team.transport.send(args.sendbuf, args.bytes, args.root, tag) : Status::kOk;
  const BlockLayout& b = args.recvBlocks;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  std::vector<P2POp> ops;
  ops.reserve(static_cast<std::size_t>(size));
  for (int q = 0; q < size; ++q)
    if (q != rank && b.bytes[q]) ops.push_back(P2POp::recv(out + b.offset[q], b.bytes[q], q));
  Transport::Request request;
  if (!ops.empty()) OVERPASS_CHECK(team.transport.start(ops, tag, &request));
  unsigned char* own = out + b.offset[rank];
  if (b.bytes[rank] && own != args.sendbuf) std::memcpy(own, args.sendbuf, b.bytes[rank]);
  return ops.empty() ? Status::kOk : team.transport.wait(request);
}

}  // namespace overpass
