// Allgather by recursive doubling, for power-of-two p.
//
// Steps: at distance d = 1, 2, ..., p/2 rank r swaps with r xor d the d blocks it holds (those
// of the ranks that share r's bits above d, contiguous in recvbuf) for the partner's d blocks,
// received straight into their place.
// Cost: log2(p) alpha + (p - 1) n beta, n = one block.
// Preconditions: p a power of two (the registry's serves; a direct call on another team size
// declines, coll/algorithms.h). Result: block i of rank i at
// recvbuf + i * bytes on every rank.
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status allgatherRecursiveDoubling(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  if ((size & (size - 1)) != 0)
    return decline(args.coll, "recursive_doubling", "the team size is not a power of two");
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  auto* own = out + static_cast<std::size_t>(rank) * n;
  if (n == 0) return Status::kOk;
  bool copyPending = args.sendbuf != own;
  for (int mask = 1; mask < size; mask <<= 1) {
    const int peer = rank ^ mask;
    const std::size_t have = static_cast<std::size_t>(rank & ~(mask - 1)) * n;
    const std::size_t get = static_cast<std::size_t>(peer & ~(mask - 1)) * n;
    // The first step sends the own block straight from sendbuf and copies it into place
    // meanwhile.
    const void* source = mask == 1 ? args.sendbuf : out + have;
    const P2POp ops[2] = {P2POp::recv(out + get, mask * n, peer),
                          P2POp::send(source, mask * n, peer)};
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start(ops, tag, &request));
    if (copyPending) std::memcpy(own, args.sendbuf, n);
    copyPending = false;
    OVERPASS_CHECK(team.transport.wait(request));
  }
  if (copyPending) std::memcpy(own, args.sendbuf, n);  // p = 1
  return Status::kOk;
}

}  // namespace overpass
