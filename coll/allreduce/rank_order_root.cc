// Allreduce in rank order through one root: every rank sends its vector to rank 0, which combines
// them in rank order, then a binomial broadcast. For deterministic mode at small sizes.
//
// Steps: rank 0 posts the p - 1 receives at once, combines ((x0 op x1) op x2) ... with the
// running result as the `in` operand (the sequence of coll/phases/rank_order_reduce_scatter.h), the
// last step written into recvbuf; then bcastBinomial from rank 0. Cost: (p - 1) alpha + (p - 1) n
// beta + (p - 1) n gamma at the root, + ceil(log2 p)(alpha + n beta): latency-bound sizes only.
// Rank 0 needs p x n bytes of scratch, so the registry limits it to p x n <= 64 MiB (larger calls
// go to rank_order). Preconditions: none beyond a commutative operation. Result: recvbuf on every
// rank, bitwise identical, equal to every other rank-order algorithm's.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "kernels/reduce_kernels.h"

namespace overpass {

Status allreduceRankOrderRoot(const CollArgs& args, Team& team) {
  const int rank = team.rank(), size = team.size();
  const int tag = static_cast<int>(args.coll);
  const std::size_t n = args.bytes;
  if (size == 1 || args.count == 0) {
    if (args.sendbuf != args.recvbuf && n) std::memmove(args.recvbuf, args.sendbuf, n);
    return Status::kOk;
  }
  if (rank != 0) {
    OVERPASS_CHECK(team.transport.send(args.sendbuf, n, 0, tag));
  } else {
    // Slot q holds rank q's vector; rank 0's own is copied when recvbuf is its input.
    auto* slots = static_cast<unsigned char*>(team.scratch.get(ScratchSlot::kBlocks, n * size));
    std::vector<P2POp> ops;
    ops.reserve(size - 1);
    for (int q = 1; q < size; ++q) ops.push_back(P2POp::recv(slots + q * n, n, q));
    Transport::Request request;
    OVERPASS_CHECK(team.transport.start(ops, tag, &request));
    const void* own = args.sendbuf;
    if (args.sendbuf == args.recvbuf) {
      std::memcpy(slots, args.sendbuf, n);
      own = slots;
    }
    OVERPASS_CHECK(team.transport.wait(request));
    const void* acc = own;
    for (int q = 1; q < size; ++q) {
      void* target = q == size - 1 ? args.recvbuf : slots + q * n;
      reduceInto(acc, slots + q * n, target, args.count, args.type, args.op, args.user);
      acc = target;
    }
  }
  CollArgs bcast = args;
  bcast.root = 0;
  return bcastBinomial(bcast, team);
}

}  // namespace overpass
