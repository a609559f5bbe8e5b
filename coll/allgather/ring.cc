// Allgather around a ring: in step s (1..p-1) rank r forwards block (r - s + 1) mod p to r + 1
// and receives block (r - s) mod p from r - 1.
// Cost: (p - 1) x (alpha + n beta), n = one block.
// Preconditions: none. Result: block i of rank i at recvbuf + i * bytes on every rank.
#include <cstring>

#include "coll/algorithms.h"

namespace overpass {

Status allgatherRing(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  auto* out = static_cast<unsigned char*>(args.recvbuf);
  auto block = [&](int i) {
    return out + static_cast<std::size_t>((i + size) % size) * args.bytes;
  };
  if (args.bytes == 0) return Status::kOk;
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  // Step 1 sends the own block straight from sendbuf; it is copied into place after the
  // exchanges, so the peers' transfers are not held up behind the local copy.
  for (int s = 1; s < size; ++s) {
    const void* out = s == 1 ? args.sendbuf : block(rank - s + 1);
    OVERPASS_CHECK(
        team.transport.sendrecv(out, args.bytes, right, block(rank - s), args.bytes, left, tag));
  }
  if (block(rank) != args.sendbuf) std::memcpy(block(rank), args.sendbuf, args.bytes);
  return Status::kOk;
}

}  // namespace overpass
