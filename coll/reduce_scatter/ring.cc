// Reduce_scatter around a ring, with blocks of different sizes (every rank knows every count).
//
// Steps: in step k (0..p-2) rank r sends its partial of block (r - k - 1) mod p to r + 1 and
// receives the partial of block (r - k - 2) mod p from r - 1, into which it reduces its own input
// block. After p - 1 steps rank r holds block r reduced over all ranks.
// Cost: (p - 1) alpha + (N - n_r) (beta + gamma), N = the whole vector, n_r = rank r's block.
// Preconditions: a commutative operation; sendbuf and recvbuf do not overlap (the shim passes a
// copy in place).
// Result: block r of the reduction in recvbuf of rank r.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status reduceScatterRing(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const BlockLayout& b = args.recvBlocks;
  const auto* in = static_cast<const unsigned char*>(args.sendbuf);
  auto wrap = [&](int i) { return (i % size + size) % size; };
  if (size == 1 || args.count == 0) {
    if (b.bytes[rank]) std::memcpy(args.recvbuf, in + b.offset[rank], b.bytes[rank]);
    return Status::kOk;
  }
  const std::size_t element = args.bytes / args.count;
  const std::size_t most = *std::max_element(b.bytes, b.bytes + size);
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  unsigned char* partial[2] = {
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming, most)),
      static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kIncoming2, most))};
  const unsigned char* outgoing = in + b.offset[wrap(rank - 1)];  // step 0: the raw input block
  for (int k = 0; k < size - 1; ++k) {
    const int sent = wrap(rank - k - 1), received = wrap(rank - k - 2);
    auto* incoming = k == size - 2 ? static_cast<unsigned char*>(args.recvbuf) : partial[k % 2];
    P2POp ops[2];
    int n = 0;
    if (b.bytes[received]) ops[n++] = P2POp::recv(incoming, b.bytes[received], left);
    if (b.bytes[sent]) ops[n++] = P2POp::send(outgoing, b.bytes[sent], right);
    if (n) OVERPASS_CHECK(team.transport.exchange({ops, static_cast<std::size_t>(n)}, tag));
    reduceLocal(in + b.offset[received], incoming, b.bytes[received] / element, args.type, args.op,
                args.user);
    outgoing = incoming;
  }
  return Status::kOk;
}

}  // namespace overpass
