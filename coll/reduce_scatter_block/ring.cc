// Reduce_scatter_block around a ring.
//
// Steps: in step k (0..p-2) rank r sends its partial of block (r - k - 1) mod p to r + 1 and
// receives the partial of block (r - k - 2) mod p from r - 1, into which it reduces its own input
// block. After p - 1 steps rank r holds block r reduced over all ranks.
// Cost: (p - 1) x (alpha + n beta + n gamma), n = one block.
// Preconditions: a commutative operation; sendbuf and recvbuf do not overlap.
// Result: block r of the reduction in recvbuf of rank r.
#include <cstring>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status reduceScatterBlockRing(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto block = [&](int i) { return in + static_cast<std::size_t>((i % size + size) % size) * n; };
  if (size == 1 || args.count == 0) {
    if (n) std::memcpy(args.recvbuf, in, n);
    return Status::kOk;
  }
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  unsigned char* partial[2] = {
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, n)),
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming2, n))};
  const void* outgoing = block(rank - 1);  // step 0 sends the raw input block
  for (int k = 0; k < size - 1; ++k) {
    void* incoming = k == size - 2 ? args.recvbuf : partial[k % 2];
    OVERPASS_CHECK(team.transport.sendrecv(outgoing, n, right, incoming, n, left, tag));
    reduceLocal(block(rank - k - 2), incoming, args.count, args.type, args.op, args.user);
    outgoing = incoming;
  }
  return Status::kOk;
}

}  // namespace overpass
